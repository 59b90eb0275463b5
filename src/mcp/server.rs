//! The rmcp handler: the handshake, `tools/list` and `tools/call`.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::tools::{Memory, ToolDef};

/// The newest protocol version served. Later revisions drop the
/// `initialize` handshake, which is all this server speaks; a client that
/// asks for one gets this one instead.
const NEWEST: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// What the client's model reads about the server as a whole.
const INSTRUCTIONS: &str = "trae-mem is the memory of past coding sessions: prompts, tool calls, answers, decisions, errors and their summaries, per project. At the start of a task, call trae_mem_inject with the task as its query. To recall something specific, call trae_mem_search, then trae_mem_timeline or trae_mem_get_observations on the ids worth a closer look. A client without hooks records its work with trae_mem_start_session, trae_mem_log and trae_mem_end_session, or sends its lifecycle events to trae_mem_hook_event.";

/// The MCP server: the tool catalog and the memory it works on.
pub struct Server {
    memory: Arc<Memory>,
    tools: Arc<Vec<ToolDef>>,
}

impl Server {
    pub fn new(memory: Memory) -> Self {
        let tools = super::tools::catalog(memory.allows_forget());
        Self { memory: Arc::new(memory), tools: Arc::new(tools) }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(NEWEST)
            .with_server_info(Implementation::new("trae-mem", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&NEWEST))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.iter().map(|def| def.tool.clone()).collect()))
    }

    /// An unknown tool is a protocol error (-32602); anything that goes
    /// wrong inside a tool is an `isError` result the model can read.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(index) = self.tools.iter().position(|def| def.name() == request.name) else {
            let names: Vec<&str> = self.tools.iter().map(ToolDef::name).collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}; the tools are {}", request.name, names.join(", ")),
                None,
            ));
        };
        let memory = Arc::clone(&self.memory);
        let tools = Arc::clone(&self.tools);
        let arguments = request.arguments.unwrap_or_default();
        // Store work blocks (SQLite may wait for a hook's lock), so it runs
        // on the blocking pool and the runtime keeps reading messages.
        let outcome = tokio::task::spawn_blocking(move || tools[index].call(&memory, arguments))
            .await
            .map_err(|err| ErrorData::internal_error(format!("the tool crashed: {err}"), None))?;
        let result = match outcome {
            Ok(output) => CallToolResult::structured(output),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }
}
