//! `wafer-emu adapters`: the GPU adapters a run could use.

use crate::engine::gpu::{list_adapters, AdapterRequest, AdapterSummary, Tuning, NATIVE_BACKENDS};
use crate::engine::{BackendChoice, EngineRequest};

/// The adapters a request admits, best first, or why there are none.
pub struct Listing {
    pub found: Vec<AdapterSummary>,
    /// What a run asking for these adapters does when none is found.
    pub note: Option<String>,
}

/// The adapters the request admits.
pub fn adapters(request: &EngineRequest) -> Listing {
    let backends = match request.backend {
        BackendChoice::Gpu(backends) => backends,
        BackendChoice::Auto => NATIVE_BACKENDS,
        BackendChoice::Cpu => return Listing::none("the CPU backend runs without an adapter"),
    };
    let found = list_adapters(&AdapterRequest {
        backends,
        name: request.adapter.clone(),
    });
    if found.is_empty() {
        return Listing::none(&match (&request.backend, &request.adapter) {
            (BackendChoice::Auto, None) => {
                "no GPU adapter found; `run --backend auto` falls back to the CPU backend".into()
            }
            (_, Some(name)) => {
                format!("no GPU adapter matches '{name}'; a run asking for it is refused")
            }
            _ => "no GPU adapter found for this backend; a run asking for it is refused".into(),
        });
    }
    Listing { found, note: None }
}

impl Listing {
    fn none(note: &str) -> Self {
        Self {
            found: vec![],
            note: Some(note.into()),
        }
    }

    /// One line per adapter, software adapters tagged, or the note.
    pub fn lines(&self) -> Vec<String> {
        let adapters = self.found.iter().enumerate().map(|(k, adapter)| {
            let tag = if adapter.is_software() {
                " [software]"
            } else {
                ""
            };
            format!("{k}: {}{tag} | tuning {}", adapter.line(), tuning(adapter))
        });
        adapters.chain(self.note.clone()).collect()
    }

    /// The adapters as data, each with the tuning its engines run under.
    pub fn json(&self) -> serde_json::Value {
        let adapters: Vec<serde_json::Value> = self
            .found
            .iter()
            .map(|adapter| {
                let mut entry = adapter.json();
                entry["tuning"] = tuning(adapter).into();
                entry
            })
            .collect();
        serde_json::json!({
            "command": "adapters",
            "schema": 1,
            "version": env!("CARGO_PKG_VERSION"),
            "adapters": adapters,
            "note": self.note,
        })
    }
}

fn tuning(adapter: &AdapterSummary) -> String {
    Tuning::of(adapter).map_or_else(|e| e.to_string(), |t| t.line())
}
