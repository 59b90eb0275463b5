/* Test set-up only, never shipped: Wine 8.0 has no bcryptprimitives.dll,
 * whose ProcessPrng Rust's standard library imports (since Rust 1.78), so
 * no Rust program starts under it (status c0000135). Windows has had the
 * DLL since Windows 8. This stand-in, placed beside the .exe in the test's
 * Wine prefix, gives ProcessPrng through RtlGenRandom (SystemFunction036),
 * which Wine does have. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x7fffffffu ? 0x7fffffffu : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
