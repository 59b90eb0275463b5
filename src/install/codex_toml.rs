//! Codex's `config.toml`, where its MCP servers live. Edited with
//! `toml_edit` rather than `toml`: this file is the user's, often with
//! comments and a layout of their own, and `toml` would drop the comments
//! and reorder the tables on every install and uninstall.

use std::path::Path;

use anyhow::{Context, Result};
use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::MCP_SERVER;
use super::file::Format;

pub struct Toml;

impl Format for Toml {
    type Doc = DocumentMut;

    fn parse(text: &str, path: &Path) -> Result<Self::Doc> {
        text.parse().with_context(|| format!("{} is not valid TOML; fix it first", path.display()))
    }

    fn print(doc: &Self::Doc) -> Option<String> {
        let text = doc.to_string();
        (!text.trim().is_empty()).then_some(text)
    }

    fn canonical(doc: &Self::Doc) -> Option<String> {
        let text = Self::print(doc)?;
        Some(toml::from_str::<toml::Table>(&text).map_or(text, |table| table.to_string()))
    }
}

/// Adds `[mcp_servers.trae-mem]` running `trae-mem mcp` (with `args`).
pub fn set_mcp_server(doc: &mut DocumentMut, bin: &Path, args: &[String]) {
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let bin = bin.to_string_lossy();
    let current = servers.get(MCP_SERVER);
    let current_args = current.and_then(|s| s.get("args")).and_then(Item::as_array);
    let same = current.and_then(|s| s.get("command")).and_then(Item::as_str) == Some(bin.as_ref())
        && current_args.is_some_and(|a| a.iter().map(|v| v.as_str()).eq(args.iter().map(|a| Some(a.as_str()))));
    if !same {
        let mut server = Table::new();
        server["command"] = value(bin.as_ref());
        server["args"] = value(Array::from_iter(args));
        servers[MCP_SERVER] = Item::Table(server);
    }
}

/// Removes `[mcp_servers.trae-mem]`, and `mcp_servers` if it is left empty.
pub fn remove_mcp_server(doc: &mut DocumentMut) {
    if let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) {
        servers.remove(MCP_SERVER);
        if servers.is_empty() {
            doc.remove("mcp_servers");
        }
    }
}

/// The binary the MCP server entry runs, if there is one.
pub fn binary(doc: &DocumentMut) -> Option<String> {
    doc.get("mcp_servers")?.get(MCP_SERVER)?.get("command")?.as_str().map(str::to_owned)
}
