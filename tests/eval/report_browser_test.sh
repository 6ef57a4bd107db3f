#!/usr/bin/env bash
# report.html in a real browser (headless chromium): every chart's text stays inside its
# picture and no label, value or legend entry overlaps another, measured by the browser's
# own layout (getBBox), not by our estimate of text widths; and the failed runs'
# drill-down is drawn by the trace viewer's timeline renderer (src/ui/timeline.js).
set -uo pipefail
reins="$1"
cd "$2"
browser=$(command -v chromium || command -v chromium-browser) || { echo "SKIP: no chromium (scripts/install-deps installs it)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$reins" eval examples --model sim --runs 2 --seed 1 --report "$tmp/r" >/dev/null 2>&1
[ -f "$tmp/r/report.html" ] || { echo "FAIL: no report.html"; exit 1; }
python3 - "$tmp/r/report.html" "$tmp/page.html" <<'PY'
import sys
script = """<script>
const bad = [];
for (const svg of document.querySelectorAll('svg')) {
  const width = svg.width.baseVal.value, height = svg.height.baseVal.value, boxes = [];
  for (const t of svg.querySelectorAll('text')) {
    const b = t.getBBox();
    if (b.x < 0 || b.x + b.width > width + 0.5 || b.y < 0 || b.y + b.height > height + 0.5) bad.push('cut off: ' + t.textContent);
    boxes.push({x: b.x, y: b.y, w: b.width, h: b.height, what: t.textContent});
  }
  for (const r of svg.querySelectorAll('rect[width="12"]')) {  // the legend's swatches
    boxes.push({x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: 12, h: 12, what: 'a legend swatch'});
  }
  for (let i = 0; i < boxes.length; ++i) for (let j = i + 1; j < boxes.length; ++j) {
    const a = boxes[i], b = boxes[j];
    if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) bad.push('overlap: ' + a.what + ' / ' + b.what);
  }
}
// The failed runs' drill-down: every turn drawn by the trace viewer's renderer.
const holders = document.querySelectorAll('[data-timeline]').length;
const drawn = document.querySelectorAll('[data-timeline] > section.turn > ol.timeline > li.step').length;
const turns = document.querySelectorAll('[data-timeline] > section.turn').length;
if (turns !== holders) bad.push('drill-down: ' + turns + ' of ' + holders + ' turns drawn');
document.title = (bad.length ? 'BAD ' + bad.join(' | ') : 'OK') + ' (' + document.querySelectorAll('svg').length + ' charts, ' +
                 turns + ' drill-down turns, ' + drawn + ' steps)';
</script>"""
html = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(html.replace("</body>", script + "</body>"))
PY
title=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$tmp/page.html" 2>/dev/null |
        grep -o "<title>[^<]*</title>" | head -n 1)
case "$title" in
  "<title>OK ("[1-9]*" charts, "[1-9]*" drill-down turns, "[1-9]*" steps)</title>") echo "report.html lays out cleanly: $title" ;;
  *) echo "FAIL: report.html in chromium: ${title:-no page}"; exit 1 ;;
esac
