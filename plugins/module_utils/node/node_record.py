# -*- coding: utf-8 -*-
# Copyright: inferops.vllm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's JSON record (image.json, model.json): read it, write it whole or not at all.

The records say what a node runs, what it ran before (a rollback's target) and what a rollout rolled
back; the image_record and model_fetch modules keep them, vllm_startup and the watchdog read them. Runs on the node
(Python 3.9; the watchdog ships it beside its script).
"""

from __future__ import annotations

import errno
import json
import os
from typing import Any, Dict, Optional


def read(path: str, dir_fd: Optional[int] = None, limit: Optional[int] = None) -> Optional[Dict[str, Any]]:
    """The record, or None where there is none (or a link, a torn or foreign file, which the next write replaces).
    Never follows a link in the record's place: the readers run as root. dir_fd: path is relative to that directory;
    limit: read at most that many bytes (a longer file is foreign), for a record in a folder others write to."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:   # a link where the record belongs
            return None
        raise
    try:
        with os.fdopen(fd, "rb") as fh:
            record = json.loads((fh.read() if limit is None else fh.read(limit)).decode("utf-8"))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def text(record: Dict[str, Any], indent: int = 4) -> str:
    """The file's text: sorted keys, one newline at the end (indent 4 is Ansible's to_nice_json)."""
    return json.dumps(record, indent=indent, sort_keys=True, separators=(",", ": ")) + "\n"


def mode_of(path: str) -> Optional[str]:
    try:
        return "%04o" % (os.stat(path).st_mode & 0o7777)
    except FileNotFoundError:
        return None


def write(path: str, record: Dict[str, Any], indent: int = 4, dir_fd: Optional[int] = None,
          tmp: Optional[str] = None) -> None:
    """tmp + fsync + rename, 0644 (the directory 0755 where missing): a reader sees the old record or the new
    one, never half of one, and a run cut in the middle leaves the old one. The temporary file is created anew
    (a link or file in its place is removed, never written through). dir_fd: path (and tmp) are relative to that
    directory, which must exist; tmp: the temporary file's name, path.tmp.<pid> by default."""
    if dir_fd is None:
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            os.makedirs(folder, mode=0o755)
    tmp = tmp or "%s.tmp.%d" % (path, os.getpid())
    try:
        os.unlink(tmp, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644, dir_fd=dir_fd)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text(record, indent))
        fh.flush()
        os.fsync(fh.fileno())
        os.chmod(fh.fileno(), 0o644)   # whatever the umask
    os.rename(tmp, path, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
