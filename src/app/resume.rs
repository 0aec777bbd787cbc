//! `wafer-emu resume DIR`: a checkpointed run continued from its folder alone. The checkpoint
//! keeps the command line that wrote it (without its output folder); resuming replays it with
//! `--resume DIR` and the few flags that may change.

use std::path::PathBuf;

use clap::Args;

use crate::{invalid, Result};

#[derive(Debug, Args)]
#[command(trailing_var_arg = true)]
pub struct ResumeArgs {
    /// The folder of a run or tsunami that wrote checkpoints (--checkpoint-every-steps, --checkpoint-every)
    pub dir: PathBuf,
    /// Flags that may change: for run --steps, --snapshot-every-steps, --checkpoint-every-steps,
    /// --json; for tsunami --duration, --checkpoint-every, --json
    #[arg(allow_hyphen_values = true, value_name = "FLAGS")]
    pub flags: Vec<String>,
}

/// The flags each resumable command lets a resume change.
const MAY_CHANGE: [(&str, &[&str]); 2] = [
    (
        "run",
        &[
            "--steps",
            "--snapshot-every-steps",
            "--checkpoint-every-steps",
            "--json",
        ],
    ),
    ("tsunami", &["--duration", "--checkpoint-every", "--json"]),
];

/// `line` (a command line after its run file is expanded) as a checkpoint keeps it: without
/// the program's name and where and how it writes (`--out`, `--resume`, `--force`).
pub fn kept_command_line(line: &[String]) -> Vec<String> {
    let line: Vec<String> = line
        .iter()
        .skip(1)
        .filter(|a| *a != "--force")
        .cloned()
        .collect();
    without_flags(&line, &["--out", "--resume"])
}

/// `line` without the flags `names` (each with its value), which a resume gives anew.
fn without_flags(line: &[String], names: &[&str]) -> Vec<String> {
    let mut kept = vec![];
    let mut args = line.iter();
    while let Some(arg) = args.next() {
        let name = arg.split('=').next().unwrap_or(arg);
        match names.contains(&name) {
            true if !arg.contains('=') => {
                args.next();
            }
            true => {}
            false => kept.push(arg.clone()),
        }
    }
    kept
}

impl ResumeArgs {
    /// The command line that continues the checkpoint in `dir`: the one that wrote it, the
    /// changed flags after it, then `--resume DIR`. A flag that would change the problem is
    /// refused by name.
    pub fn command_line(&self, program: &str) -> Result<Vec<String>> {
        let kept = crate::commands::checkpoint_command_line(&self.dir)?;
        let command = kept.first().map_or("", String::as_str);
        let Some((_, allowed)) = MAY_CHANGE.iter().find(|(name, _)| *name == command) else {
            return Err(invalid!(
                "{}: the checkpoint's command '{command}' cannot be resumed: allowed run, tsunami",
                self.dir.display()
            ));
        };
        let changed: Vec<&str> = self
            .flags
            .iter()
            .filter(|a| a.starts_with("--"))
            .map(|flag| flag.split('=').next().unwrap_or(flag))
            .collect();
        if let Some(name) = changed.iter().find(|name| !allowed.contains(name)) {
            return Err(invalid!(
                "resume {}: {name} cannot change on resume (the checkpoint's command line: `{}`): allowed {}",
                self.dir.display(),
                kept.join(" "),
                allowed.join(", ")
            ));
        }
        let dir = self.dir.to_string_lossy().into_owned();
        let resume = ["--resume".to_string(), dir];
        let kept = without_flags(&kept, &changed);
        Ok([&[program.to_string()][..], &kept, &self.flags, &resume].concat())
    }
}
