#!/usr/bin/env bash
# Chromium for the test of report.html in a real headless browser (tests/test_batch_report_page.py),
# from Debian's packages (browser downloads at install time are not possible here). Without apt
# or root it says so and succeeds: that one test is then skipped with the reason.
#
# The test command runs this in the background while the tests run: until it ends, a marker
# file holding its process id says an install is under way, and the browser test waits for it
# (tests/test_batch_report_page.py; its tests run last).
set -u
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  echo "install_chromium.sh: no apt-get or not root; install chromium to test report.html" >&2
  exit 0
fi
marker="${TMPDIR:-/tmp}/pycc-stencil-chromium-install.pid"
echo $$ >"$marker"
trap 'rm -f "$marker"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >/tmp/install_chromium.log 2>&1; then
  echo "install_chromium.sh: apt-get failed (see /tmp/install_chromium.log)" >&2
fi
exit 0
