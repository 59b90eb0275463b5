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
    pub kind: String,
    pub tool: Option<String>,
    /// `[PRIVATE]` when the row is private, except in exports.
    pub content: String,
    pub private: bool,
    pub tags: Vec<String>,
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
