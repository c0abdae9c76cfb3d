#!/usr/bin/env python3
"""tmux-html.py: a tmux pane captured with escapes (tmux capture-pane -e -p)
as an HTML page, so that a browser can screenshot the console as it looked.

usage: tmux capture-pane -e -p -t PANE | python3 docs/tmux-html.py TITLE > pane.html
       chromium --headless --screenshot=pane.png --window-size=W,H file://$PWD/pane.html

Handles the SGR escapes tmux emits (reset, bold, dim, reverse, the 8/16
colours, 256 colours, 24-bit colours); everything else is dropped.
"""
import html
import re
import sys

BASE = ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#3b78ff", "#cd00cd", "#00cdcd", "#e5e5e5",
        "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"]


def c256(n):
    if n < 16:
        return BASE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    g = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (g, g, g)


def main():
    title = sys.argv[1] if len(sys.argv) > 1 else "mailbench console"
    text = sys.stdin.read()
    st = {"fg": None, "bg": None, "bold": False, "rev": False, "dim": False}
    out = []
    pos = 0
    for m in re.finditer(r"\x1b\[([0-9;]*)m|\x1b[^a-zA-Z]*[a-zA-Z]|\x1b.", text):
        out.append((dict(st), text[pos:m.start()]))
        pos = m.end()
        if m.group(1) is None:
            continue
        codes = [int(x) if x else 0 for x in m.group(1).split(";")]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                st = {"fg": None, "bg": None, "bold": False, "rev": False, "dim": False}
            elif c == 1:
                st["bold"] = True
            elif c == 2:
                st["dim"] = True
            elif c == 7:
                st["rev"] = True
            elif c == 22:
                st["bold"] = st["dim"] = False
            elif c == 27:
                st["rev"] = False
            elif 30 <= c <= 37:
                st["fg"] = BASE[c - 30]
            elif 90 <= c <= 97:
                st["fg"] = BASE[c - 90 + 8]
            elif 40 <= c <= 47:
                st["bg"] = BASE[c - 40]
            elif 100 <= c <= 107:
                st["bg"] = BASE[c - 100 + 8]
            elif c == 39:
                st["fg"] = None
            elif c == 49:
                st["bg"] = None
            elif c in (38, 48) and i + 1 < len(codes):
                key = "fg" if c == 38 else "bg"
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    st[key] = c256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    st[key] = "#%02x%02x%02x" % tuple(codes[i + 2:i + 5])
                    i += 4
            i += 1
    out.append((dict(st), text[pos:]))
    body = []
    for s, chunk in out:
        if not chunk:
            continue
        fg, bg = s["fg"] or "#d0d0d0", s["bg"] or "#101010"
        if s["rev"]:
            fg, bg = bg, fg
        style = "color:%s;background:%s" % (fg, bg)
        if s["bold"]:
            style += ";font-weight:bold"
        if s["dim"]:
            style += ";opacity:0.7"
        body.append('<span style="%s">%s</span>' % (style, html.escape(chunk)))
    print("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>%s</title>"
          "<style>body{margin:0;background:#101010}pre{margin:0;padding:8px;"
          "font:14px/1.25 'DejaVu Sans Mono',monospace;color:#d0d0d0}</style></head>"
          "<body><pre>%s</pre></body></html>" % (html.escape(title), "".join(body)))


main()
