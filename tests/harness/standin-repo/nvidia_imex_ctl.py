"""Stand-in nvidia-imex-ctl: `-N` prints the domain connectivity for the nodes in
the IMEX node config file, READY when the nvidia-imex stand-in daemon runs."""
import os
import subprocess
import sys
from datetime import datetime

DRIVER = "@DRIVER_VERSION@"


def node_config_path():
    path = "/etc/nvidia-imex/nodes_config.cfg"
    try:
        with open("/etc/nvidia-imex/config.cfg", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("IMEX_NODE_CONFIG_FILE="):
                    path = line.split("=", 1)[1].strip()
    except OSError:
        pass
    return path


def main(argv):
    if "-N" not in argv and "--print-node-status" not in argv:
        print("usage: nvidia-imex-ctl [-N] [-q]", file=sys.stderr)
        sys.exit(2)
    running = subprocess.call(["systemctl", "is-active", "--quiet", "nvidia-imex"]) == 0
    if not running:
        print("Connection to IMEX daemon failed: could not connect to 127.0.0.1:50005")
        sys.exit(1)
    try:
        with open(node_config_path(), encoding="utf-8") as fh:
            nodes = [l.strip() for l in fh if l.strip() and not l.startswith("#")]
    except OSError:
        nodes = []
    print("Connectivity Table Legend:\nI - Invalid - Node wasn't reachable, no connection status available\n"
          "N - Never Connected\nR - Recovering - Connection was lost, but clean up has not yet been triggered.\n"
          "D - Disconnected - Connection was lost, and clean up has been triggreed.\n"
          "A - Authenticating - If GSSAPI enabled, client has initiated mutual authentication process.\n"
          "V - Version mismatch, this node is not running compatible version of IMEX.\nC - Connected - Ready for operation\n")
    print(datetime.now().strftime("%m/%d/%Y %H:%M:%S.%f")[:-3])
    print("Nodes:")
    for i, ip in enumerate(nodes):
        print("Node #%-3d - %-15s - READY                - Version: %s" % (i, ip, DRIVER))
    print("\n Nodes From\\To  " + "   ".join(str(i) for i in range(len(nodes))))
    for i in range(len(nodes)):
        print("       %-8d" % i + "   ".join("C" for _node in nodes))
    print("Domain State: %s" % ("UP" if nodes else "DOWN"))
    if os.environ.get("IMEX_CTL_STRICT") and not nodes:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
