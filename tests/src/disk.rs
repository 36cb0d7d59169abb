//! A small disk for the full-disk trials: a tmpfs mounted for the test (root only), filled to
//! its last byte and freed again.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted at `dir` for the test, unmounted on drop.
#[derive(Debug)]
pub struct Disk {
    /// Where it is mounted.
    pub dir: PathBuf,
}

impl Disk {
    /// A tmpfs of `size` (`size=16m`) at `dir`.
    pub fn mount_sized(dir: &Path, size: &str) -> Disk {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", size, "epigraph-full-disk"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(mounted, "mounting a tmpfs at {dir:?} needs root");
        Disk {
            dir: dir.to_path_buf(),
        }
    }

    /// Fill the disk to its last byte: a file written until the write fails for want of space.
    pub fn fill(&self) -> u64 {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.dir.join("filler")).unwrap();
        let block = vec![0u8; 1 << 20];
        let mut written = 0u64;
        loop {
            match filler.write(&block) {
                Ok(0) => break,
                Ok(n) => written += n as u64,
                Err(error) => {
                    assert_eq!(
                        error.raw_os_error(),
                        Some(28),
                        "filling the disk failed otherwise: {error}"
                    );
                    break;
                }
            }
        }
        // Whatever a smaller write still fits.
        while filler.write(&[0u8; 512]).is_ok_and(|n| n > 0) {
            written += 512;
        }
        let _ = filler.sync_all();
        written
    }

    /// Give the space back: the filler is deleted.
    pub fn free(&self) {
        let _ = std::fs::remove_file(self.dir.join("filler"));
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// Every file under `dir`, recursively (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}
