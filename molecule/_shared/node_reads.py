"""What the scenarios' testinfra tests read on a converged node, once for all of them."""


def selections(host):
    """dpkg's selection per package (install, hold, deinstall)."""
    return dict(line.split() for line in host.check_output("dpkg --get-selections").splitlines())


def held(host):
    return {name for name, selection in selections(host).items() if selection == "hold"}


def policy(host, name):
    """apt's Installed and Candidate versions of a package."""
    lines = [line.strip() for line in host.check_output("apt-cache policy %s" % name).splitlines()]
    return {key: line.split(":", 1)[1].strip() for line in lines for key in ("Installed", "Candidate")
            if line.startswith(key + ":")}


def content_lines(host, path):
    """The file's lines without comments and blank lines."""
    return [line for line in host.file(path).content_string.splitlines() if line.strip() and not line.startswith("#")]


def mtime(host, path):
    return int(host.check_output("stat -c %%Y %s" % path))


def started_at(host, unit):
    """When the unit last entered the active state, in seconds since the epoch."""
    return int(host.check_output('date -d "$(systemctl show -p ActiveEnterTimestamp --value %s)" +%%s' % unit))


def managed_file(host, path):
    """A file the roles write: root's, mode 0644."""
    f = host.file(path)
    assert f.is_file and f.mode == 0o644 and f.user == "root" and f.group == "root", path
    return f


def debian_13_node(host):
    """A Debian 13 (trixie) node as its installer leaves it and the roles keep it: deb822 sources only (no
    sources.list), and Docker from trixie's own docker.io (26.x; Debian 12's is 20.10)."""
    assert host.file("/etc/debian_version").content_string.startswith("13.")
    assert not host.file("/etc/apt/sources.list").exists
    assert "Suites: trixie" in content_lines(host, "/etc/apt/sources.list.d/debian.sources")
    assert not [p for p in host.check_output("ls /etc/apt/sources.list.d").split() if p.endswith(".list")]
    version = host.package("docker.io").version
    assert int(version.split(".")[0]) >= 26, version
