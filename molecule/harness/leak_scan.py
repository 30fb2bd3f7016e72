"""On a node: which files any user may read, and which journal entries, hold a secret.

usage: python3 leak_scan.py < SECRETS   (one secret a line, on stdin: never on the command line)

Walks the node as a user without privileges could: into directories that others may enter, files
that others may read (/proc, /sys, /dev, /usr but /usr/local and the read-only stand-in repository
are left out). Prints the paths found, one a line, and "journal" when journalctl's output holds a
secret. Test harness only, standard library only."""
import os
import stat
import subprocess
import sys

SKIP = ("/proc", "/sys", "/dev", "/usr", "/srv/inferops-standin")
LIMIT = 16 << 20


def scan(secrets):
    found = []
    for top in ("/", "/usr/local"):
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP
                       and _enterable(os.path.join(root, d))]
            for name in files:
                path = os.path.join(root, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode) or st.st_size > LIMIT or not st.st_mode & stat.S_IROTH:
                    continue
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if any(s in data for s in secrets):
                    found.append(path)
    return found


def _enterable(path):
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_mode & (stat.S_IROTH | stat.S_IXOTH) == stat.S_IROTH | stat.S_IXOTH


def main():
    secrets = [line.strip().encode() for line in sys.stdin if line.strip()]
    if not secrets:
        sys.exit("no secrets on stdin")
    found = scan(secrets)
    journal = subprocess.run(["journalctl", "--no-pager", "-o", "cat"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=False).stdout
    if any(s in journal for s in secrets):
        found.append("journal")
    print("\n".join(found))


if __name__ == "__main__":
    main()
