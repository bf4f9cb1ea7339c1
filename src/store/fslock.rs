//! Whether several processes (on several nodes of a cluster) can share a file here: the score
//! store's appends are serialised by `flock` on `scores.lock`, which works on local file
//! systems, on NFSv4 (Linux maps flock to NFSv4 byte-range locks) and on NFSv3 only where the
//! lock manager (lockd / rpc.statd) runs. Where the file system has no locks, `flock` fails with
//! ENOLCK (or EOPNOTSUPP / ENOSYS); hyst-tui then refuses to share a store there rather than
//! append without a lock.

use std::io;
use std::path::Path;

/// The name of the file system holding `path` (`ext4`, `nfs`, `lustre`, …), or its magic
/// number when unknown.
pub fn fs_type(path: &Path) -> String {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return "unknown".into() };
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized out-parameter.
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return "unknown".into();
        }
        let magic = st.f_type as u64 & 0xffff_ffff;
        let name = match magic {
            0xEF53 => "ext4",
            0x5846_5342 => "xfs",
            0x9123_683E => "btrfs",
            0x0102_1994 => "tmpfs",
            0x794C_7630 => "overlayfs",
            0x6969 => "nfs",
            0xFF53_4D42 => "cifs",
            0xFE53_4D42 => "smb2",
            0x0BD0_0BD0 => "lustre",
            0x4750_4653 => "gpfs",
            0x1983_0326 => "beegfs",
            0x00C3_6400 => "ceph",
            0x2FC1_2FC1 => "zfs",
            0x6573_5546 => "fuse",
            0x5346_4846 => "wekafs",
            _ => return format!("unknown (0x{magic:x})"),
        };
        name.into()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        "unknown".into()
    }
}

/// Is this error a file system saying it has no locks (rather than a lock held elsewhere)?
pub fn means_no_locks(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS))
    }
    #[cfg(not(unix))]
    {
        e.kind() == io::ErrorKind::Unsupported
    }
}

/// What [`probe`] found in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockProbe {
    pub fs: String,
    /// `None`: an exclusive flock was taken and released.
    pub error: Option<String>,
}

impl LockProbe {
    pub fn works(&self) -> bool {
        self.error.is_none()
    }
}

/// Takes and releases an exclusive lock on a scratch file in `dir` (created if needed).
pub fn probe(dir: &Path) -> LockProbe {
    let fail = |fs: String, e: io::Error| LockProbe { fs, error: Some(e.to_string()) };
    if let Err(e) = std::fs::create_dir_all(dir) {
        return fail(fs_type(dir.parent().unwrap_or(dir)), e);
    }
    let fs = fs_type(dir);
    let file = dir.join(format!(".hyst-lock-probe.{}", std::process::id()));
    let r = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&file).and_then(|f| {
        match f.try_lock() {
            Ok(()) => {
                let _ = f.unlock();
                Ok(())
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(()), // someone holds it: locks work
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    });
    let _ = std::fs::remove_file(&file);
    match r {
        Ok(()) => LockProbe { fs, error: None },
        Err(e) => fail(fs, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_work_in_a_temporary_directory_and_its_file_system_is_named() {
        let t = tempfile::tempdir().unwrap();
        let p = probe(&t.path().join("store"));
        assert!(p.works(), "{p:?}");
        assert!(!p.fs.is_empty() && p.fs != "unknown", "{p:?}");
        assert_eq!(std::fs::read_dir(t.path().join("store")).unwrap().count(), 0, "the probe file is removed");
    }

    #[cfg(unix)]
    #[test]
    fn no_lock_errors_are_told_from_others() {
        assert!(means_no_locks(&io::Error::from_raw_os_error(libc::ENOLCK)));
        assert!(means_no_locks(&io::Error::from_raw_os_error(libc::EOPNOTSUPP)));
        assert!(!means_no_locks(&io::Error::from_raw_os_error(libc::EACCES)));
        assert!(!means_no_locks(&io::Error::from_raw_os_error(libc::EWOULDBLOCK)));
    }
}
