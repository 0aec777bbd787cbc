//! The host memory a run may still take, checked before large allocations so that a run too
//! large for the machine is refused with the figure it needs instead of aborting half way.

use crate::{Error, Result};

/// Refuses `bytes` of host memory for `what` when the process may allocate less
/// ([`available`]); the error names both figures and `advice`.
pub fn check_host_memory(what: &str, bytes: u64, advice: &str) -> Result<()> {
    match available() {
        Some(available) if bytes > available => Err(Error::TooLarge(format!(
            "{what} needs {} MiB of memory but only {} MiB are available: {advice}",
            bytes.div_ceil(1 << 20),
            available >> 20
        ))),
        _ => Ok(()),
    }
}

/// Bytes this process may still allocate, as far as Linux tells: the least of the machine's
/// available memory (`MemAvailable`), the headroom of its control group and of every group
/// above it (a batch job's limit), and its address-space limit (`ulimit -v`) less what it has
/// mapped. `None` where nothing is known (other systems).
pub fn available() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let meminfo = read("/proc/meminfo").and_then(|t| kib_field(&t, "MemAvailable:"));
    let cgroup = read("/proc/self/cgroup").and_then(|t| cgroup_headroom(&t));
    let mapped = read("/proc/self/status").and_then(|t| kib_field(&t, "VmSize:"));
    let address_space = read("/proc/self/limits")
        .and_then(|t| address_space_limit(&t))
        .map(|limit| limit.saturating_sub(mapped.unwrap_or(0)));
    [meminfo, cgroup, address_space].into_iter().flatten().min()
}

/// The value in bytes of a `NAME: N kB` line (`/proc/meminfo`, `/proc/self/status`).
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The soft `Max address space` limit of `/proc/self/limits`, in bytes (`None`: unlimited).
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// The least headroom of the process's memory control groups and of the groups above them,
/// up to the root that `/proc/self/cgroup` shows (a container's own): the limit less what the
/// group uses, its reclaimable page cache not counted. cgroup v2 (`memory.max`) and v1's
/// memory controller (`memory.limit_in_bytes`) alike.
fn cgroup_headroom(cgroup: &str) -> Option<u64> {
    let v2 = cgroup.lines().find_map(|l| l.strip_prefix("0::"));
    let v1 = cgroup.lines().find_map(|l| {
        let (_, rest) = l.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    });
    let groups = |root: &'static str, path: Option<&str>| {
        let dirs: Vec<String> = path
            .map(|p| ancestors(p).map(|a| format!("{root}{a}")).collect())
            .unwrap_or_default();
        dirs.into_iter().chain([root.to_string()])
    };
    let v2 = groups("/sys/fs/cgroup", v2)
        .filter_map(|dir| headroom(&dir, ["memory.max", "memory.current", "inactive_file"]));
    let v1 = groups("/sys/fs/cgroup/memory", v1).filter_map(|dir| {
        let files = [
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
            "total_inactive_file",
        ];
        headroom(&dir, files)
    });
    v2.chain(v1).min()
}

/// The headroom of the group in `dir`: its limit less its usage (files `[limit, usage]`),
/// the `memory.stat` entry `cache` (page cache the kernel frees on demand) given back.
fn headroom(dir: &str, [limit, usage, cache]: [&str; 3]) -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).ok();
    let number = |name: &str| read(name)?.trim().parse::<u64>().ok();
    let (limit, usage) = (number(limit)?, number(usage)?);
    let reclaimable = read("memory.stat")
        .and_then(|stat| stat_field(&stat, cache))
        .unwrap_or(0);
    Some(limit.saturating_sub(usage.saturating_sub(reclaimable)))
}

/// The value of a `NAME N` line of `memory.stat`.
fn stat_field(stat: &str, name: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// `/a/b/c`, `/a/b`, `/a`: a cgroup path and the groups above it, short of the root.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let path = path.trim().trim_end_matches('/');
    std::iter::successors(Some(path), |p| p.rfind('/').map(|i| &p[..i])).filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_are_read_in_bytes() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(kib_field(meminfo, "MemAvailable:"), Some(20_000_000 * 1024));
        assert_eq!(kib_field(meminfo, "VmSize:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max address space         4096000000           unlimited            bytes     \n";
        assert_eq!(address_space_limit(limits), Some(4_096_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(unlimited), None);
        let groups: Vec<&str> = ancestors("/system.slice/job_7/step_0\n").collect();
        assert_eq!(
            groups,
            [
                "/system.slice/job_7/step_0",
                "/system.slice/job_7",
                "/system.slice"
            ]
        );
        assert_eq!(ancestors("/").count(), 0);
        let stat = "anon 100\ninactive_file 4096\nactive_file 8\n";
        assert_eq!(stat_field(stat, "inactive_file"), Some(4096));
        assert_eq!(stat_field(stat, "file"), None);
    }

    #[test]
    fn this_process_may_allocate_something() {
        if cfg!(target_os = "linux") {
            assert!(available().is_some_and(|bytes| bytes > 0));
        }
    }
}
