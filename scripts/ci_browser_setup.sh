#!/usr/bin/env bash
# Install what the browser test (tests/test_widget_browser.py, marker "browser") needs
# outside Python: Debian's chromium. Playwright drives this system binary
# (executable_path=/usr/bin/chromium); `playwright install` is never run, no browser is
# downloaded. The Python side (playwright, jupyterlab, anywidget) comes from the
# project's test extra: pip install -e '.[test]'.
#
# Usage: scripts/ci_browser_setup.sh      (as root, or with sudo available)
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    echo "ci_browser_setup: chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || true)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "ci_browser_setup: need root (or sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q chromium
echo "ci_browser_setup: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
