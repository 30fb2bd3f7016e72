"""Stand-in nvidia-smi. Prints what the real tool prints for the GPUs described
in /etc/inferops-standin/gpu.json (written per simulated node by the harness).
The driver version is baked in by the package that ships this file."""
import json
import sys

DRIVER = "@DRIVER_VERSION@"
CUDA = "13.0"
PROFILE = "/etc/inferops-standin/gpu.json"
# Faults a test injects on a node ({"<gpu index>": ["remap_pending", ...]}): what -q -x and nvlink -s then show
FAULTS = "/etc/inferops-standin/faults.json"
# NVLinks per GPU of the models that have them (nvlink -s)
NVLINKS = {"H100": 18, "H200": 18, "B200": 18, "B300": 18, "GB200": 18, "GB300": 18}
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


def faults():
    try:
        with open(FAULTS, encoding="utf-8") as fh:
            return {int(k): set(v) for k, v in json.load(fh).items()}
    except OSError:
        return {}


def xml_query():
    """-q -x: the fields a health read judges, in the driver's schema (r575, nvsmi_device_v12.dtd)."""
    prof = load_profile()
    bad = faults()
    out = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">', "<nvidia_smi_log>",
           "\t<driver_version>%s</driver_version>" % DRIVER, "\t<cuda_version>%s</cuda_version>" % CUDA,
           "\t<attached_gpus>%s</attached_gpus>" % prof["count"]]
    for r in gpus(prof):
        f = bad.get(int(r["index"]), set())
        remap = "Yes" if "remap_pending" in f else "No"   # a pending remap asks for a reset, as the driver does
        fabric = ""
        if prof["model"].startswith("GB"):
            fabric = ("\t\t<fabric><state>Completed</state><status>Success</status><health><bandwidth>%s</bandwidth>"
                      "<route_unhealthy>False</route_unhealthy></health></fabric>\n"
                      % ("Degraded" if "fabric_degraded" in f else "Full"))
        out.append(
            '\t<gpu id="%s">\n\t\t<product_name>%s</product_name>\n\t\t<uuid>%s</uuid>\n'
            "\t\t<gpu_reset_status><reset_required>%s</reset_required>"
            "<drain_and_reset_recommended>No</drain_and_reset_recommended></gpu_reset_status>\n"
            "\t\t<pci><pci_bus_id>%s</pci_bus_id><pci_gpu_link_info><link_widths><max_link_width>16x</max_link_width>"
            "<current_link_width>%s</current_link_width></link_widths></pci_gpu_link_info></pci>\n"
            "\t\t<clocks_event_reasons><clocks_event_reason_gpu_idle>Active</clocks_event_reason_gpu_idle>"
            "<clocks_event_reason_hw_slowdown>%s</clocks_event_reason_hw_slowdown></clocks_event_reasons>\n"
            "\t\t<ecc_errors><volatile><sram_uncorrectable_parity>0</sram_uncorrectable_parity>"
            "<dram_uncorrectable>%d</dram_uncorrectable></volatile><aggregate><dram_uncorrectable>%d</dram_uncorrectable>"
            "<sram_threshold_exceeded>No</sram_threshold_exceeded></aggregate></ecc_errors>\n"
            "\t\t<retired_pages><pending_retirement>N/A</pending_retirement></retired_pages>\n"
            "\t\t<remapped_rows><remapped_row_pending>%s</remapped_row_pending>"
            "<remapped_row_failure>No</remapped_row_failure></remapped_rows>\n%s\t</gpu>"
            % (r["pci.bus_id"], r["name"], r["uuid"], remap, r["pci.bus_id"],
               "8x" if "pcie_x8" in f else "16x", "Active" if "hw_slowdown" in f else "Not Active",
               2 if "ecc" in f else 0, 2 if "ecc" in f else 0, remap, fabric))
    out.append("</nvidia_smi_log>")
    print("\n".join(out))


def nvlink_status():
    prof = load_profile()
    links = NVLINKS.get(prof["model"], 0)
    bad = faults()
    for r in gpus(prof):
        print("GPU %s: %s (UUID: %s)" % (r["index"], r["name"], r["uuid"]))
        for link in range(links):
            down = link == 0 and "nvlink_down" in bad.get(int(r["index"]), set())
            print("\t Link %d: %s" % (link, "<inactive>" if down else "26.562 GB/s"))


def main(argv):
    opts = dict(a.split("=", 1) if "=" in a else (a, "") for a in argv)
    if "--version" in opts:
        print("NVIDIA-SMI version  : %s\nNVML version        : %s\nDRIVER version      : %s\nCUDA Version        : %s"
              % (DRIVER, DRIVER.split(".", maxsplit=1)[0], DRIVER, CUDA))
    elif "-L" in opts:
        for r in gpus(load_profile()):
            print("GPU %s: %s (UUID: %s)" % (r["index"], r["name"], r["uuid"]))
    elif argv == ["-q", "-x"]:
        xml_query()
    elif argv == ["nvlink", "-s"]:
        nvlink_status()
    elif "--query-gpu" in opts:
        query(opts["--query-gpu"].split(","), opts.get("--format", "csv"))
    elif not argv:
        table()
    else:
        print("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n")
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
