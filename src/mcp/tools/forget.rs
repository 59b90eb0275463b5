//! `trae_mem_forget`: an agent drops a memory the user asked it to. Only
//! by explicit ids or one session, never by query, so that no agent can
//! wipe memory wholesale; and only when `[mcp] allow_forget = true`.

use rmcp::model::ToolAnnotations;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Memory, Spec, ToolDef, ToolError};
use crate::forget;
use crate::store::{Filters, Selection};

pub(super) fn definition() -> ToolDef {
    let mut def = ToolDef::new(
        Spec {
            name: "trae_mem_forget",
            title: "Forget observations or a session",
            description: "Delete memory for good, when the user asks you to: observations by their ids (as trae_mem_search and trae_mem_timeline show them), or one whole session by its id. Never by query: look the ids up first and confirm them with the user. Summaries that quoted what goes are written again from what remains; the deleted text leaves the database file. Returns what was removed.",
            example: r#"{"ids": [4211, 4212]}"#,
            read_only: false,
        },
        forget_tool,
    );
    def.tool = def.tool.annotate(ToolAnnotations::new().read_only(false).destructive(true).open_world(false));
    def
}

/// Arguments of trae_mem_forget: `ids`, or `session_id`, not both.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct ForgetInput {
    /// Observation ids to delete.
    #[serde(default)]
    ids: Vec<i64>,
    /// A session to delete whole (its full id).
    session_id: Option<String>,
}

/// What was removed.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ForgetOutput {
    observations: u64,
    sessions_removed: u64,
    /// Sessions that lost observations and were summarized again from what remains.
    sessions_resummarized: u64,
}

fn forget_tool(memory: &Memory, input: ForgetInput) -> Result<ForgetOutput, ToolError> {
    let mut store = memory.store();
    let selection = match (input.ids.is_empty(), input.session_id) {
        (false, None) => Selection { ids: input.ids, ..Selection::default() },
        (true, Some(session)) => {
            let session = Some(super::reader(&store).session(&session)?.id);
            Selection { filters: Filters { session, ..Filters::default() }, ..Selection::default() }
        }
        _ => return Err(ToolError("give either ids (observation ids) or session_id, one of them".to_owned())),
    };
    let plan = forget::plan(&store, &selection)?;
    if plan.observations.is_empty() && plan.sessions.is_empty() {
        return Err(ToolError("nothing has those ids; trae_mem_search or trae_mem_timeline show them".to_owned()));
    }
    let forgotten = forget::carry_out(&mut store, &memory.loaded, &plan, &mut |_| {}).map_err(anyhow::Error::from)?;
    if forgotten.sessions_resummarized > 0 {
        crate::embed::start_after_writing(&memory.loaded.home);
    }
    Ok(ForgetOutput {
        observations: forgotten.observations,
        sessions_removed: forgotten.sessions_removed,
        sessions_resummarized: forgotten.sessions_resummarized,
    })
}
