//! Run files: `--config FILE.toml` expanded into the flags it holds.

use crate::{invalid, Result};

use super::Cli;

/// Expands `--config FILE.toml` into the flags the file holds, placed before the command
/// line's own (later flags override earlier ones). `kernel` is the positional kernel, used
/// when the command line gives none right after the command.
pub fn with_config(args: Vec<String>) -> Result<Vec<String>> {
    let Some(at) = args.iter().position(|a| a == "--config") else {
        return Ok(args);
    };
    let path = args
        .get(at + 1)
        .ok_or_else(|| invalid!("--config needs a FILE.toml"))?;
    let text =
        std::fs::read_to_string(path).map_err(|e| invalid!("cannot read run file {path}: {e}"))?;
    let table: toml::Table = text.parse().map_err(|e| invalid!("run file {path}: {e}"))?;
    let name = args.get(1).filter(|a| !a.starts_with('-')).ok_or_else(|| {
        invalid!("--config goes after the command: wafer-emu run --config {path}")
    })?;
    if let Some(action) = args.get(2).filter(|a| is_action(name, a)) {
        return Err(invalid!(
            "--config: `wafer-emu {name} {action}` takes no run file (one sets the flags of `wafer-emu {name}` itself)"
        ));
    }
    let (kernel, flags) = toml_flags(path, name, &table)?;
    let rest: Vec<String> = args[2..]
        .iter()
        .enumerate()
        .filter(|&(k, _)| k + 2 != at && k + 2 != at + 1)
        .map(|(_, a)| a.clone())
        .collect();
    if let Some(k) = rest.iter().position(|a| a == "--config") {
        let other = rest.get(k + 1).map_or("", String::as_str);
        return Err(invalid!(
            "--config given twice ({path} and {other}): allowed one run file"
        ));
    }
    let positional_given = rest.first().is_some_and(|a| !a.starts_with('-'));
    let mut out = vec![args[0].clone(), name.clone()];
    out.extend(kernel.filter(|_| !positional_given));
    out.extend(flags);
    out.extend(rest);
    Ok(out)
}

/// Whether `word` is a subcommand of command `name` (`sweep merge`).
fn is_action(name: &str, word: &str) -> bool {
    Cli::command_line()
        .find_subcommand(name)
        .is_some_and(|c| c.find_subcommand(word).is_some())
}

/// The flags of command `name` that a TOML table says (keys are long flags, `_` for `-`), and
/// its `kernel`; unknown keys are refused by name (`source` names the file in messages).
pub fn toml_flags(
    source: &str,
    name: &str,
    table: &toml::Table,
) -> Result<(Option<String>, Vec<String>)> {
    let path = source;
    let cli = Cli::command_line();
    let command = cli
        .find_subcommand(name)
        .ok_or_else(|| invalid!("unknown command '{name}'"))?;
    let args: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|a| a.get_long().is_some_and(|long| long != "config"))
        .collect();
    let takes_kernel = command.get_positionals().any(|a| a.get_id() == "kernel");
    let (mut kernel, mut flags) = (None, vec![]);
    for (key, value) in table {
        if key == "kernel" && takes_kernel {
            kernel = Some(toml_scalar(path, key, value)?);
            continue;
        }
        let long = key.replace('_', "-");
        let Some(arg) = args.iter().find(|a| a.get_long() == Some(long.as_str())) else {
            let known: Vec<&str> = takes_kernel
                .then_some("kernel")
                .into_iter()
                .chain(args.iter().filter_map(|a| a.get_long()))
                .collect();
            return Err(invalid!(
                "run file {path}: unknown key '{key}': allowed {}",
                known.join(", ")
            ));
        };
        let flag = format!("--{long}");
        match (arg.get_action(), value) {
            (clap::ArgAction::SetTrue, toml::Value::Boolean(on)) => {
                flags.extend(on.then_some(flag))
            }
            (clap::ArgAction::SetTrue, other) => {
                return Err(invalid!(
                    "run file {path}: '{key}' is a switch: allowed true or false, not {}",
                    other.type_str()
                ))
            }
            (clap::ArgAction::Append, toml::Value::Array(items)) => {
                for item in items {
                    flags.extend([flag.clone(), toml_scalar(path, key, item)?]);
                }
            }
            (_, toml::Value::Array(_)) => {
                return Err(invalid!(
                    "run file {path}: '{key}' takes one value, not a list"
                ))
            }
            (_, other) => flags.extend([flag, toml_scalar(path, key, other)?]),
        }
    }
    Ok((kernel, flags))
}

/// The text of a run file's value for `key`: a string or a number.
fn toml_scalar(path: &str, key: &str, value: &toml::Value) -> Result<String> {
    match value {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        other => Err(invalid!(
            "run file {path}: '{key}' is {}: allowed a string or a number",
            other.type_str()
        )),
    }
}
