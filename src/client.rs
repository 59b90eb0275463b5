//! The clients trae-mem works with: one list, and the one place their names
//! are spelled. Adapters (`crate::adapters`) read the hook clients' payloads;
//! install (`crate::install`) writes every client's configuration.
//!
//! A client's name is what `--client`, `trae-mem install` and the spool
//! carry; it is read back with `parse`, never compared as text.

use std::fmt;
use std::str::FromStr;

/// A coding agent trae-mem records for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Client {
    ClaudeCode,
    Cursor,
    Codex,
    Gemini,
    Cline,
    /// Trae: no hooks, only trae-mem's MCP server (`trae_mem_hook_event`).
    Trae,
}

impl Client {
    /// Every client, in the order help texts list them.
    pub const ALL: [Client; 6] =
        [Client::ClaudeCode, Client::Cursor, Client::Codex, Client::Gemini, Client::Cline, Client::Trae];

    /// The client's name, as `--client` and `trae-mem install` take it.
    pub const fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::Cline => "cline",
            Client::Trae => "trae",
        }
    }

    /// Other names a client answers to.
    const fn aliases(self) -> &'static [&'static str] {
        match self {
            Client::ClaudeCode => &["claude"],
            _ => &[],
        }
    }

    /// Whether the client runs hook commands (`trae-mem hook`); a client
    /// without them reaches trae-mem through MCP only.
    pub const fn has_hooks(self) -> bool {
        !matches!(self, Client::Trae)
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Client {
    type Err = UnknownClient;

    /// A client by its name or an alias (`claude` for claude-code).
    fn from_str(name: &str) -> Result<Self, UnknownClient> {
        Client::ALL
            .into_iter()
            .find(|client| client.name() == name || client.aliases().contains(&name))
            .ok_or_else(|| UnknownClient { name: name.to_owned(), hooks_only: false })
    }
}

/// A name that is no client (or, for hooks, no client with hooks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownClient {
    name: String,
    /// Whether the clients that were possible are those with hooks only.
    hooks_only: bool,
}

impl UnknownClient {
    /// `name` is no client that runs hooks.
    pub fn for_hooks(name: &str) -> Self {
        Self { name: name.to_owned(), hooks_only: true }
    }
}

impl fmt::Display for UnknownClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let supported: Vec<&str> =
            Client::ALL.into_iter().filter(|c| !self.hooks_only || c.has_hooks()).map(Client::name).collect();
        write!(f, "unknown client {:?}; supported: {}", self.name, supported.join(", "))
    }
}

impl std::error::Error for UnknownClient {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_read_back() {
        for client in Client::ALL {
            assert_eq!(client.name().parse::<Client>(), Ok(client));
        }
        assert_eq!("claude".parse::<Client>(), Ok(Client::ClaudeCode));
        let err = "nonesuch".parse::<Client>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown client \"nonesuch\"; supported: claude-code, cursor, codex, gemini, cline, trae"
        );
        let err = UnknownClient::for_hooks("trae");
        assert_eq!(err.to_string(), "unknown client \"trae\"; supported: claude-code, cursor, codex, gemini, cline");
    }
}
