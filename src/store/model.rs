//! The rows the store hands out. Their serde form is the stable `--json`
//! output and the export format, so fields are only ever added.

use serde::{Deserialize, Serialize};

/// A local session: one run of a coding agent in one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub project: String,
    /// Unix milliseconds.
    pub started_at: i64,
    pub ended_at: Option<i64>,
    /// Free facts about the session, such as the client and how it started.
    pub meta: serde_json::Value,
    /// How many observations it holds (private ones included).
    #[serde(default)]
    pub observations: i64,
}

/// One recorded fact: a prompt, a tool call, an answer, a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub id: i64,
    pub session_id: String,
    /// Unix milliseconds.
    pub ts: i64,
    pub kind: Kind,
    pub tool: Option<String>,
    /// `[PRIVATE]` when the row is private, except in exports.
    pub content: String,
    pub private: bool,
    pub tags: Vec<String>,
}

/// How the notes of a turn's end and a session's end begin: they record
/// that something happened, and say nothing search should find by meaning.
pub const STOP_NOTE: &str = "stop: ";
pub const SESSION_END_NOTE: &str = "session end: ";
/// The kind of the observations a summarizer's learnings become.
pub const LEARNING: &str = "learning";
/// The reason a turn's end is given when the client names none.
pub const TURN_ENDED: &str = "turn ended";

/// What an observation records. The built-in kinds, and any kind a plugin
/// names. On the wire (JSON, SQL, exports) it is the bare string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Kind {
    /// What the user asked.
    User,
    /// A tool call and its result.
    Tool,
    /// Something that happened: a tool about to run, a turn's end, an event.
    Note,
    Decision,
    /// A tool call that failed.
    Error,
    /// The model's answer.
    Response,
    /// A session's summary, as a search hit (summaries live in their own table).
    Summary,
    /// A kind a plugin (or `trae_mem_log`) named.
    Other(String),
}

impl Kind {
    /// The kinds trae-mem itself records.
    pub const BUILT_IN: [Kind; 7] =
        [Kind::User, Kind::Tool, Kind::Note, Kind::Decision, Kind::Error, Kind::Response, Kind::Summary];

    pub fn as_str(&self) -> &str {
        match self {
            Kind::User => "user",
            Kind::Tool => "tool",
            Kind::Note => "note",
            Kind::Decision => "decision",
            Kind::Error => "error",
            Kind::Response => "response",
            Kind::Summary => "summary",
            Kind::Other(name) => name,
        }
    }
}

impl From<&str> for Kind {
    fn from(name: &str) -> Self {
        match name {
            "user" => Kind::User,
            "tool" => Kind::Tool,
            "note" => Kind::Note,
            "decision" => Kind::Decision,
            "error" => Kind::Error,
            "response" => Kind::Response,
            "summary" => Kind::Summary,
            other => Kind::Other(other.to_owned()),
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Kind::from(<std::borrow::Cow<'de, str>>::deserialize(deserializer)?.as_ref()))
    }
}

impl rusqlite::ToSql for Kind {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl rusqlite::types::FromSql for Kind {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        value.as_str().map(Kind::from)
    }
}

/// How detailed a summary is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummaryLevel {
    Brief,
    Detailed,
}

impl SummaryLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryLevel::Brief => "brief",
            SummaryLevel::Detailed => "detailed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "brief" => Some(SummaryLevel::Brief),
            "detailed" => Some(SummaryLevel::Detailed),
            _ => None,
        }
    }
}

/// A session's summary at one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub session_id: String,
    pub level: SummaryLevel,
    /// Unix milliseconds.
    pub created_at: i64,
    pub content: String,
}

/// A session with everything recorded in it, for `show`.
#[derive(Debug, Clone, Serialize)]
pub struct SessionDetail {
    pub session: Session,
    pub summaries: Vec<Summary>,
    pub observations: Vec<Observation>,
}
