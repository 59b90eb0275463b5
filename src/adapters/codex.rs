//! Codex CLI: its hooks send Claude Code's payload shape (`session_id`,
//! `cwd`, `hook_event_name`, `tool_input`, `tool_response`,
//! `last_assistant_message`) plus `turn_id`, and read context the same way.

use anyhow::Result;
use serde_json::Value;

use super::Adapter;
use super::claude_code::{hook_specific_context, parse_shape};
use crate::client::Client;
use crate::event::Event;

pub struct Codex;

impl Adapter for Codex {
    fn client(&self) -> Client {
        Client::Codex
    }

    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event> {
        parse_shape(self.name(), event, payload)
    }

    fn context_output(&self, event: &Event, context: &str) -> Option<String> {
        hook_specific_context(event, context)
    }
}
