"""Run a command and watch every process's argv while it runs, for molecule/harness's registry login.

usage: python3 leak_watch.py SECRETS_FILE -- COMMAND [ARG ...]

SECRETS_FILE holds one secret a line (passwords and their base64 user:password forms). Prints one
JSON document: the command's exit code, the processes whose argv held a secret while it ran (the
command itself, ansible's workers, `docker exec`, the nodes' processes: the nodes share this
machine's process table), how many times the command's output held a secret, and the output's
tail with each secret replaced by <SECRET>. Test harness only, standard library only."""
import json
import os
import subprocess
import sys
import threading
import time


def watch_argv(secrets, hits, stop):
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    argv = f.read()
            except OSError:
                continue
            if any(s in argv for s in secrets):
                hits.add(os.path.basename(argv.split(b"\0", 1)[0]).decode("utf-8", "replace"))
        stop.wait(0.02)


def main(secrets_file, command):
    with open(secrets_file, "rb") as f:
        secrets = [line.strip() for line in f if line.strip()]
    hits, stop = set(), threading.Event()
    watcher = threading.Thread(target=watch_argv, args=(secrets, hits, stop), daemon=True)
    watcher.start()
    started = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    stop.set()
    watcher.join()
    output = result.stdout
    leaks = sum(output.count(s) for s in secrets)
    for s in secrets:
        output = output.replace(s, b"<SECRET>")
    print(json.dumps({"rc": result.returncode, "argv_hits": sorted(hits), "output_leaks": leaks,
                      "seconds": round(time.monotonic() - started, 1),
                      "tail": output.decode("utf-8", "replace")[-8000:]}))


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[3:])
