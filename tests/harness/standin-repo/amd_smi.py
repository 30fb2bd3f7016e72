"""Stand-in amd-smi. Prints what the real tool prints (JSON mode) for the GPUs
described in /etc/inferops-standin/gpu.json."""
import json
import sys

ROCM = "@ROCM_VERSION@"
AMDGPU = "6.14.14"
PROFILE = "/etc/inferops-standin/gpu.json"
# The collection's GPU rows (hardware.CATALOG), written in by build_repo.py: model -> vendor, family, memory_gib, sm100
CATALOG = json.loads(r"""@CATALOG@""")
CARDS = {  # what the real tool prints: market name, VRAM MiB, gfx target (MI300X: a GPU outside the catalog)
    "MI300X": ("AMD Instinct MI300X", 196592, "gfx942"),
    "MI350X": ("AMD Instinct MI350X", 294896, "gfx950"),
    "MI355X": ("AMD Instinct MI355X", 294896, "gfx950"),
}


def profile():
    try:
        with open(PROFILE, encoding="utf-8") as fh:
            prof = json.load(fh)
    except OSError:
        prof = {}
    if prof.get("vendor") != "amd" or not prof.get("count"):
        print("ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status "
              "(sudo modprobe amdgpu)", file=sys.stderr)
        sys.exit(1)
    return prof


def card(model):
    """A catalog row the table above lacks prints as AMD would name it, with its catalog memory."""
    if model in CARDS:
        return CARDS[model]
    return "AMD Instinct " + model, CATALOG[model]["memory_gib"] * 1024, "gfx950"


def devices(prof):
    name, vram, gfx = card(prof["model"])
    for i in range(int(prof["count"])):
        bdf = "0000:%02x:00.0" % (0x05 + 0x10 * i)
        yield i, bdf, name, vram, gfx


def main(argv):
    cmd = argv[0] if argv else "help"
    as_json = "--json" in argv
    if cmd == "version":
        if as_json:
            print(json.dumps([{"tool": "AMDSMI Tool", "version": "26.2.0+a1b2c3d", "amdsmi_library_version": "26.2.0",
                               "rocm_version": ROCM, "amdgpu_version": AMDGPU, "amd_hsmp_driver_version": "N/A"}], indent=4))
        else:
            print("AMDSMI Tool: 26.2.0+a1b2c3d | AMDSMI Library version: 26.2.0 | ROCm version: %s | "
                  "amdgpu version: %s | amd_hsmp version: N/A" % (ROCM, AMDGPU))
        return
    prof = profile()
    if cmd == "list":
        out = [{"gpu": i, "bdf": bdf, "uuid": "%02xff74a1-0000-1000-80ab-%012x" % (i, 0x5a00 + i),
                "kfd_id": 40000 + i, "node_id": 2 + i, "partition_id": 0} for i, bdf, *_rest in devices(prof)]
    elif cmd == "static":
        out = {"gpu_data": [{"gpu": i, "asic": {"market_name": name, "vendor_id": "0x1002", "vendor_name":
                                                "Advanced Micro Devices Inc. [AMD/ATI]", "device_id": "0x75a3",
                                                "target_graphics_version": gfx, "num_compute_units": 256},
                             "bus": {"bdf": bdf},
                             "driver": {"name": "amdgpu", "version": AMDGPU},
                             "vram": {"type": "HBM", "vendor": "SAMSUNG", "size": {"value": vram, "unit": "MB"}}}
                            for i, bdf, name, vram, gfx in devices(prof)]}
    else:
        print("amd-smi: error: argument command: invalid choice: '%s'" % cmd, file=sys.stderr)
        sys.exit(2)
    print(json.dumps(out, indent=4) if as_json else out)


if __name__ == "__main__":
    main(sys.argv[1:])
