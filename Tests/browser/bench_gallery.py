"""Drives the gallery page for `make bench-gallery` (ca-bench's gallery section), over stdin/stdout.

Usage: bench_gallery.py URL. Prints "heap <bytes>" (the page's JS heap after a garbage collection, from the
Chrome DevTools Protocol's Runtime.getHeapUsage) and "ready <count> <ms to first render>", then answers:
  "wait <token>" -> "at <epoch ms> <count>"  once the page has applied the change with that token to the DOM
  "scroll"       -> "scroll <median ms> <p95 ms> <max cells in the DOM>" for 60 jumps to random rows
                    (each: the render of the new rows and the layout it causes)
  "quit"
"""

import os
import sys
import time

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def say(*words):
    print(*words, flush=True)


def main(url):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        started = time.monotonic()
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        page.wait_for_function("() => [...document.querySelectorAll('.cell')].every(c => c.dataset.badge)",
                               timeout=60_000)
        load_ms = (time.monotonic() - started) * 1000
        cdp = page.context.new_cdp_session(page)
        cdp.send("HeapProfiler.enable")
        cdp.send("HeapProfiler.collectGarbage")
        heap = cdp.send("Runtime.getHeapUsage")["usedSize"]
        say("heap", int(heap))
        say("ready", page.evaluate("gallery.ids.length"), f"{load_ms:.0f}")
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "wait":
                token = int(words[1])
                page.wait_for_function(f"() => gallery.token >= {token}", timeout=30_000, polling="raf")
                entry = page.evaluate(f"gallery.applied.find(a => a.token >= {token})")
                say("at", entry["at"], entry["count"], entry.get("sent") or 0)
            elif words[0] == "scroll":
                times = page.evaluate("""async () => {
                    const viewport = document.getElementById('viewport');
                    const frame = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
                    const times = [];
                    let cells = 0;
                    let seed = 7;
                    for (let i = 0; i < 60; i++) {
                        seed = (seed * 1103515245 + 12345) % 2147483648;
                        await frame();
                        // One jump: the grid's own render of the new rows plus the style and layout it causes.
                        const start = performance.now();
                        viewport.scrollTop = (seed / 2147483648) * (viewport.scrollHeight - viewport.clientHeight);
                        gallery.render();
                        void document.body.offsetHeight;
                        times.push(performance.now() - start);
                        cells = Math.max(cells, document.querySelectorAll('.cell').length);
                    }
                    times.sort((a, b) => a - b);
                    return [times[30], times[Math.floor(times.length * 0.95)], cells];
                }""")
                say("scroll", f"{times[0]:.2f}", f"{times[1]:.2f}", times[2])
            elif words[0] == "quit":
                break
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1])
