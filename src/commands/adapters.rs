//! `wafer-emu adapters`: the GPU adapters a run could use.

use crate::engine::gpu::{list_adapters, AdapterRequest, Tuning, NATIVE_BACKENDS};
use crate::engine::{BackendChoice, EngineRequest};

/// One line per adapter the request admits, software adapters tagged.
pub fn adapters(request: &EngineRequest) -> Vec<String> {
    let backends = match request.backend {
        BackendChoice::Gpu(backends) => backends,
        BackendChoice::Auto => NATIVE_BACKENDS,
        BackendChoice::Cpu => return vec!["the CPU backend runs without an adapter".into()],
    };
    let found = list_adapters(&AdapterRequest {
        backends,
        name: request.adapter.clone(),
    });
    if found.is_empty() {
        let line = match (&request.backend, &request.adapter) {
            (BackendChoice::Auto, None) => {
                "no GPU adapter found; `run --backend auto` falls back to the CPU backend".into()
            }
            (_, Some(name)) => {
                format!("no GPU adapter matches '{name}'; a run asking for it is refused")
            }
            _ => "no GPU adapter found for this backend; a run asking for it is refused".into(),
        };
        return vec![line];
    }
    found
        .iter()
        .enumerate()
        .map(|(k, adapter)| {
            let tag = if adapter.is_software() {
                " [software]"
            } else {
                ""
            };
            let tuning = Tuning::of(adapter).map_or_else(|e| e.to_string(), |t| t.line());
            format!("{k}: {}{tag} | tuning {tuning}", adapter.line())
        })
        .collect()
}
