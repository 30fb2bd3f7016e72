"""Stand-in nvidia-smi. Prints what the real tool prints for the GPUs described
in /etc/inferops-standin/gpu.json (written per simulated node by the harness).
The driver version is baked in by the package that ships this file."""
import json
import sys

DRIVER = "@DRIVER_VERSION@"
CUDA = "13.0"
PROFILE = "/etc/inferops-standin/gpu.json"
# The collection's GPU rows (hardware.CATALOG), written in by build_repo.py: model -> vendor, family, memory_gib, sm100
CATALOG = json.loads(r"""@CATALOG@""")
# What the real tool prints for these models: name, memory MiB, compute capability, board power W
CARDS = {
    "H100": ("NVIDIA H100 80GB HBM3", 81559, "9.0", 700),
    "H200": ("NVIDIA H200", 143771, "9.0", 700),
    "B200": ("NVIDIA B200", 183359, "10.0", 1000),
    "B300": ("NVIDIA B300 SXM6 AC", 275040, "10.3", 1100),
    "GB200": ("NVIDIA GB200", 189471, "10.0", 1200),
    "GB300": ("NVIDIA GB300", 284208, "10.3", 1400),
}


def load_profile():
    try:
        with open(PROFILE, encoding="utf-8") as fh:
            prof = json.load(fh)
    except OSError:
        prof = {}
    if prof.get("vendor", "nvidia") != "nvidia" or not prof.get("count"):
        print("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
              "Make sure that the latest NVIDIA driver is installed and running.\n")
        sys.exit(9)
    return prof


def card(model):
    """A catalog row the table above lacks prints as its vendor would name it, with its catalog memory."""
    if model in CARDS:
        return CARDS[model]
    row = CATALOG[model]
    return "NVIDIA " + model, row["memory_gib"] * 1024, "10.0" if row["sm100"] else "9.0", 1000


def gpus(prof):
    name, mem, cc, power = card(prof["model"])
    node = prof.get("serial_base", 1320224000000)
    for i in range(int(prof["count"])):
        yield {
            "index": str(i), "name": name, "memory.total": str(mem), "memory.used": "0",
            "memory.free": str(mem), "driver_version": DRIVER, "compute_cap": cc,
            "uuid": "GPU-%08x-4c1d-9f2e-7a3b-%012x" % (0x5a1e0000 + i, node + i),
            "pci.bus_id": "00000000:%02X:00.0" % (0x18 + 0x10 * i), "serial": str(node + i),
            "persistence_mode": "Enabled", "power.limit": "%.2f" % power,
            "temperature.gpu": "31", "utilization.gpu": "0", "vbios_version": "96.00.AF.00.01",
            "gpu_name": name, "count": str(prof["count"]),
        }


def query(fields, fmt):
    prof = load_profile()
    rows = list(gpus(prof))
    units = {"memory.total": " MiB", "memory.used": " MiB", "memory.free": " MiB",
             "power.limit": " W", "utilization.gpu": " %"}
    for f in fields:
        if f not in rows[0]:
            print('Field "%s" is not a valid field to query.\n' % f)
            sys.exit(2)
    if "noheader" not in fmt:
        print(", ".join(f + (" [%s]" % units[f].strip() if f in units else "") for f in fields))
    for row in rows:
        print(", ".join(row[f] + ("" if "nounits" in fmt else units.get(f, "")) for f in fields))


def table():
    prof = load_profile()
    rows = list(gpus(prof))
    print("+-----------------------------------------------------------------------------------------+")
    print("| NVIDIA-SMI %-14s Driver Version: %-14s CUDA Version: %-8s|" % (DRIVER, DRIVER, CUDA))
    print("|-----------------------------------------+------------------------+----------------------+")
    print("| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |")
    print("|=========================================+========================+======================|")
    for r in rows:
        print("| %3s  %-26s      On | %s Off |                    0 |"
              % (r["index"], r["name"][:26], r["pci.bus_id"]))
        print("| N/A   31C    P0             %4sW / %4sW |       0MiB / %6sMiB |      0%%      Default |"
              % (120, r["power.limit"].split(".")[0], r["memory.total"]))
    print("+-----------------------------------------+------------------------+----------------------+")


def main(argv):
    opts = dict(a.split("=", 1) if "=" in a else (a, "") for a in argv)
    if "--version" in opts:
        print("NVIDIA-SMI version  : %s\nNVML version        : %s\nDRIVER version      : %s\nCUDA Version        : %s"
              % (DRIVER, DRIVER.split(".", maxsplit=1)[0], DRIVER, CUDA))
    elif "-L" in opts:
        for r in gpus(load_profile()):
            print("GPU %s: %s (UUID: %s)" % (r["index"], r["name"], r["uuid"]))
    elif "--query-gpu" in opts:
        query(opts["--query-gpu"].split(","), opts.get("--format", "csv"))
    elif not argv:
        table()
    else:
        print("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n")
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
