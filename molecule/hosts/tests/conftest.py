"""Each test module reads the nodes it names in `testinfra_hosts`. Molecule runs testinfra with
--hosts=all, which testinfra lets win over a module's own list: the other nodes' cases are
deselected here instead."""


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        wanted = getattr(item.module, "testinfra_hosts", None)
        host = getattr(item, "callspec", None) and item.callspec.params.get("_testinfra_host")
        name = host.backend.get_hostname() if host else None
        (keep if wanted is None or name in wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
