//! trae-mem's benchmarks, in one binary: `cargo bench -- <benchmark>
//! [options]`, for example `cargo bench -- hook --runs 300`. One binary is
//! one link against the library (with thin LTO, about two minutes on two
//! cores), where one per benchmark made eight.
//!
//! Each benchmark's module says what it measures and takes.

#[path = "support/built.rs"]
mod built;
#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/floor.rs"]
mod floor;
#[path = "support/run.rs"]
mod run;
// The tests' own PostgreSQL server and mock model server, and the harness
// they report a skip through; the benchmarks use part of each.
#[allow(dead_code)]
#[path = "../tests/mock_anthropic.rs"]
mod mock_anthropic;
#[allow(dead_code)]
#[path = "../tests/mock_model.rs"]
mod mock_model;
#[allow(dead_code)]
#[path = "../tests/pg.rs"]
mod pg;
#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

mod forget;
mod hook;
mod recall;
mod serve;
mod store;
mod summarize;
mod sync;
mod windows;

type Benchmark = fn(Vec<String>) -> anyhow::Result<()>;

const BENCHMARKS: &[(&str, Benchmark)] = &[
    ("store", store::main),
    ("hook", hook::main),
    ("recall", recall::main),
    ("forget", forget::main),
    ("serve", serve::main),
    ("sync", sync::main),
    ("summarize", summarize::main),
    ("windows", windows::main),
];

fn main() -> anyhow::Result<()> {
    // cargo passes `--bench` to a benchmark without the standard harness.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let names = || BENCHMARKS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    let Some(name) = args.first() else {
        anyhow::bail!("name a benchmark: cargo bench -- <benchmark> [options], one of {}", names());
    };
    let Some((_, benchmark)) = BENCHMARKS.iter().find(|(n, _)| n == name) else {
        anyhow::bail!("no benchmark named {name:?}: one of {}", names());
    };
    // Each reads its options as it did as a program of its own: the first
    // argument (its name) in place of the program's.
    benchmark(args)
}
