"""The gallery in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright for Python.

Starts the bundled fake S3 server (seeded sample bucket, admin endpoint on), syncs a library with the
`cloudassets` CLI and serves it with `cloudassets serve`; every change to the bucket is synced by another
`cloudassets` process, as a user would from another terminal.

Environment: CLOUDASSETS_BIN (folder with `cloudassets` and `fake-s3`, default .build/debug), CHROMIUM
(default /usr/bin/chromium), GALLERY_SCREENSHOTS (output folder, default .build/gallery-screenshots).
Run: python3 -m unittest Tests/browser/test_gallery.py  (or through `swift test --filter GalleryBrowserTests`).
"""

import datetime
import http.server
import select
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

import boto3
from botocore.config import Config
from playwright.sync_api import sync_playwright

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.abspath(os.environ.get("CLOUDASSETS_BIN", os.path.join(ROOT, ".build", "debug")))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = os.path.abspath(os.environ.get("GALLERY_SCREENSHOTS", os.path.join(ROOT, ".build", "gallery-screenshots")))
ACCESS, SECRET, BUCKET = "gallery", "gallery-secret", "photos"
ASSETS = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout, what):
    """Polls `condition` until it is true; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Gallery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gallery-browser-")
        os.makedirs(SHOTS, exist_ok=True)
        s3root = os.path.join(cls.tmp, "s3")
        subprocess.run([f"{BIN}/fake-s3", "seed", "--root", s3root, "--assets", str(ASSETS)], check=True,
                       stdout=subprocess.DEVNULL)
        cls.s3port = free_port()
        cls.s3 = subprocess.Popen([f"{BIN}/fake-s3", "serve", "--root", s3root, "--port", str(cls.s3port),
                                   "--access-key", ACCESS, "--secret-key", SECRET, "--faults"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.endpoint = f"http://127.0.0.1:{cls.s3port}"
        wait_until(lambda: cls.s3_up(), 10, "the fake S3 server")
        cls.env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS, AWS_SECRET_ACCESS_KEY=SECRET,
                       AWS_ENDPOINT_URL=cls.endpoint, CLOUDASSETS_STORE=os.path.join(cls.tmp, "library"),
                       CLOUDASSETS_BUCKET=BUCKET, HOME=cls.tmp)
        cls.cli("sync", "--quiet")
        cls.server = subprocess.Popen([f"{BIN}/cloudassets", "serve", "--port", "0", "--quiet"], env=cls.env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cls.url = cls.server.stdout.readline().strip()
        assert cls.url.startswith("http://127.0.0.1:"), cls.url
        cls.base = cls.url.split("/?")[0]
        cls.token = cls.url.split("token=")[1]
        cls.bucket = boto3.client("s3", endpoint_url=cls.endpoint, aws_access_key_id=ACCESS,
                                  aws_secret_access_key=SECRET, region_name="us-east-1",
                                  config=Config(s3={"addressing_style": "path"}))
        cls.playwright = sync_playwright().start()
        cls.browser = cls.playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.playwright.stop()
        for process in (cls.server, cls.s3):
            process.terminate()
            process.communicate(timeout=10)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def s3_up(cls):
        try:
            with socket.create_connection(("127.0.0.1", cls.s3port), timeout=0.2):
                return True
        except OSError:
            return False

    @classmethod
    def cli(cls, *args):
        return subprocess.run([f"{BIN}/cloudassets", *args], env=cls.env, check=True, capture_output=True,
                              text=True, timeout=60)

    def setUp(self):
        self.page = self.browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def tearDown(self):
        self.page.screenshot(path=os.path.join(SHOTS, f"{self._testMethodName}.png"))
        self.page.close()
        self.assertEqual(self.errors, [], "JavaScript errors on the page")

    def open_gallery(self, url=None):
        self.page.goto(url or self.url)
        self.page.wait_for_selector("body[data-ready=true]", timeout=10_000)
        self.page.wait_for_function("() => [...document.querySelectorAll('.cell')].every(c => c.dataset.badge)")

    def ids(self):
        return self.page.evaluate("gallery.ids.slice()")

    def info(self):
        with urllib.request.urlopen(f"{self.base}/api/info?token={self.token}") as answer:
            return json.load(answer)

    def asset(self, identifier):
        with urllib.request.urlopen(f"{self.base}/api/assets?token={self.token}&ids={identifier}") as answer:
            return json.load(answer)["assets"][0]

    def put(self, key, created, body=b"x"):
        self.bucket.put_object(Bucket=BUCKET, Key=key, Body=body, Metadata={
            "creation-date": created.strftime("%Y-%m-%dT%H:%M:%SZ"), "media-type": "image",
            "pixel-width": "64", "pixel-height": "48", "orientation": "1"})

    # ---- Tests -------------------------------------------------------------------------------------------

    def test_grid_renders_the_library(self):
        self.open_gallery()
        ids = self.ids()
        count = self.info()["count"]
        self.assertEqual(len(ids), count)
        self.assertGreaterEqual(count, ASSETS - 5)
        cells = self.page.evaluate("[...document.querySelectorAll('.cell')].map(c => [c.dataset.id, c.dataset.badge])")
        # Only the rows in view (plus a small margin) are in the DOM, in grid order.
        self.assertGreater(len(cells), 20)
        self.assertLessEqual(len(cells), count)
        self.assertEqual({c[0] for c in cells}, set(ids[:len(cells)]))
        self.assertTrue({c[1] for c in cells} <= {"cloud", "thumbnail", "partial", "full", "uploading"})
        # Newest first: the creation dates of the first cells never increase.
        first = [self.asset(i)["created"] for i in ids[:10]]
        self.assertEqual(first, sorted(first, reverse=True))
        # Thumbnails load for the cells whose asset has one.
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('.cell img:not([hidden])')].some(i => i.complete && i.naturalWidth > 0)")
        self.page.screenshot(path=os.path.join(SHOTS, "gallery.png"))

    def test_sync_updates_cells_in_place(self):
        self.open_gallery()
        before = self.ids()
        token = self.page.evaluate("gallery.token")
        # Tag every cell in the DOM: untouched ones must be the same nodes after the sync.
        tagged = self.page.evaluate(
            "[...document.querySelectorAll('.cell')].map(c => { c.__before = c.dataset.id; return c.dataset.id })")
        keys = {}
        for item in self.bucket.list_objects_v2(Bucket=BUCKET, Prefix="originals/")["Contents"]:
            keys[item["Key"]] = item
        by_id = {i: self.asset(i) for i in before[:12]}
        deleted, redated = before[3], before[5]
        name = {i: by_id[i]["name"] for i in by_id}
        deleted_key = next(k for k in keys if k.endswith("/" + name[deleted]))
        redated_key = next(k for k in keys if k.endswith("/" + name[redated]))
        newest = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
        self.put("originals/zz-new-1.png", newest)
        self.put("originals/zz-new-2.png", newest - datetime.timedelta(hours=1))
        self.bucket.delete_object(Bucket=BUCKET, Key=deleted_key)
        self.put(redated_key, datetime.datetime(1999, 1, 1, tzinfo=datetime.timezone.utc), body=b"re-dated")
        self.cli("sync", "--full", "--quiet", "--no-thumbnails")  # another process
        # On the page within a second of that process's commit (it has exited by now).
        self.page.wait_for_function(f"() => gallery.token > {token}", timeout=1_000)
        after = self.ids()
        self.assertEqual(len(after), len(before) + 1)
        self.assertNotIn(deleted, after)
        self.assertEqual(after[-1], redated, "the re-dated asset is now the oldest")
        self.assertEqual([self.asset(i)["name"] for i in after[:2]], ["zz-new-1.png", "zz-new-2.png"])
        # The same order as a fresh fetch.
        fresh = self.browser.new_page()
        fresh.goto(self.url)
        fresh.wait_for_selector("body[data-ready=true]")
        self.assertEqual(fresh.evaluate("gallery.ids.slice()"), after)
        fresh.close()
        # Untouched cells still in view are the very DOM nodes they were; the DOM holds only cells in view.
        state = self.page.evaluate(
            "[...document.querySelectorAll('.cell')].map(c => [c.dataset.id, c.__before === c.dataset.id])")
        untouched = [s for s in state if s[0] in tagged and s[0] not in (deleted, redated)]
        self.assertGreater(len(untouched), 20)
        self.assertTrue(all(same for _, same in untouched), f"re-created cells: {untouched}")
        applied = self.page.evaluate("gallery.applied.map(a => a.kind)")
        self.assertEqual(applied[-1], "change")
        self.assertEqual(applied.count("reset"), 1, "applied in place, never reloaded")
        self.assertEqual(self.page.evaluate("document.querySelectorAll('.cell').length"), len(state))

    def first_cloud_only(self, skip=()):
        return self.page.evaluate(
            "(skip) => [...document.querySelectorAll('.cell[data-badge=cloud]')].map(c => c.dataset.id)"
            ".find(id => !skip.includes(id))", list(skip))

    def test_open_cloud_only_shows_progress_then_full(self):
        self.open_gallery()
        target = self.first_cloud_only()
        self.assertIsNotNone(target, "a cloud-only asset in view")
        size = self.asset(target)["size"]
        # Slow the download down (about 1 s) so its progress shows.
        rule = {"keyPattern": "originals/*", "method": "GET", "times": 1,
                "fault": {"type": "bandwidthLimit", "bytesPerSecond": max(20_000, size)}}
        request = urllib.request.Request(f"{self.endpoint}/_fake-s3/faults", data=json.dumps(rule).encode(),
                                         method="POST")
        urllib.request.urlopen(request).close()
        try:
            self.page.evaluate("""(id) => {
                window.seen = [];
                const cell = gallery.cell(id);
                new MutationObserver(() => window.seen.push(cell.dataset.downloading === 'true' ?
                    Number(cell.dataset.progress) : -1)).observe(cell, {attributes: true});
            }""", target)
            self.page.dblclick(f".cell[data-id='{target}']")
            self.page.wait_for_selector(f".cell[data-id='{target}'][data-badge=full]", timeout=15_000)
            seen = self.page.evaluate("window.seen")
            self.assertTrue(any(0 < p < 1 for p in seen if p >= 0), f"progress between 0 and 1: {seen}")
            self.assertIsNone(self.page.get_attribute(f".cell[data-id='{target}']", "data-downloading"))
            self.page.wait_for_selector("#viewer:not([hidden]) img", timeout=5_000)
        finally:
            urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/_fake-s3/faults", method="DELETE")).close()

    def test_edited_badge_toggles_before_and_after(self):
        self.open_gallery()
        # The first thumbnail in view that has loaded and is not square (the images load after the grid shows).
        target = self.page.wait_for_function(
            "[...document.querySelectorAll('.cell[data-badge=thumbnail]')].map(c => c.dataset.id)"
            ".find(id => { const i = gallery.cell(id).querySelector('img');"
            " return i.complete && i.naturalWidth > 0 && i.naturalWidth !== i.naturalHeight })",
            timeout=10_000).json_value()
        self.assertIsNotNone(target, "a non-square thumbnail in view")
        cell = f".cell[data-id='{target}']"
        self.page.wait_for_function("(s) => document.querySelector(s + ' img').complete", arg=cell)
        before = self.page.evaluate("(s) => { const i = document.querySelector(s + ' img');"
                                    " return [i.naturalWidth, i.naturalHeight] }", cell)
        self.cli("edit", target, "--rotate", "90", "--network", "--quiet")  # another process
        self.page.wait_for_selector(f"{cell}[data-edited=true] .edited", state="visible", timeout=5_000)
        size = "(s) => { const i = document.querySelector(s + ' img'); return i.complete && i.naturalWidth > 0 ?" \
               " [i.naturalWidth, i.naturalHeight] : null }"
        landscape = "true" if before[0] > before[1] else "false"
        turned = f"(s) => ({size})(s) && (({size})(s)[0] > ({size})(s)[1]) !== {landscape}"
        unturned = f"(s) => ({size})(s) && (({size})(s)[0] > ({size})(s)[1]) === {landscape}"
        self.page.wait_for_function(turned, arg=cell)
        # Before: the original's thumbnail; after: the edit's again.
        self.page.click(f"{cell} .edited")
        self.assertEqual(self.page.get_attribute(cell, "data-before"), "true")
        self.assertIn("version=original", self.page.get_attribute(f"{cell} img", "src"))
        self.page.wait_for_function(unturned, arg=cell)
        self.page.screenshot(path=os.path.join(SHOTS, "edited-before.png"))
        self.page.click(f"{cell} .edited")
        self.assertEqual(self.page.get_attribute(cell, "data-before"), "false")
        self.page.wait_for_function(turned, arg=cell)
        self.assertEqual(self.page.text_content(f"{cell} .edited"), "Edited")

    def test_cloud_only_video_plays_and_seeks_by_range(self):
        # Another tool's video (no fields of ours), moov after the media data, as phones write it.
        clip = os.path.join(self.tmp, "clip.mp4")
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                        "-t", "40", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", "2M", "-g", "25",
                        "-pix_fmt", "yuv420p", "-metadata", "creation_time=2031-01-01T00:00:00Z", clip],
                       check=True, timeout=120)
        size = os.path.getsize(clip)
        key = "originals/clips/clip.mp4"
        with open(clip, "rb") as source:
            self.bucket.put_object(Bucket=BUCKET, Key=key, Body=source.read())
        # The library is the class's: the clip leaves it again, whatever happens here.
        self.addCleanup(lambda: self.cli("sync", "--full", "--quiet", "--no-thumbnails"))
        self.addCleanup(lambda: self.bucket.delete_object(Bucket=BUCKET, Key=key))
        self.cli("sync", "--full", "--quiet")  # another tool's object: no journal entry tells of it
        listed = json.loads(self.cli("ls", "--json", "--prefix", "clips/").stdout)
        self.assertEqual([a["key"] for a in listed], [key], listed)
        asset = listed[0]
        self.assertAlmostEqual(asset["duration"], 40, delta=0.1)
        self.assertEqual(asset["state"], "cloudOnly")
        target = asset["id"]
        self.open_gallery()
        self.page.wait_for_selector(f".cell[data-id='{target}']", timeout=10_000)
        urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/_fake-s3/log", method="DELETE")).close()
        self.page.dblclick(f".cell[data-id='{target}']")
        video = "document.getElementById('viewer-video')"
        self.page.wait_for_function(f"() => !{video}.hidden && {video}.readyState >= 2", timeout=20_000)
        self.page.evaluate(f"""() => {{
            const v = {video};
            window.seekedAt = null;
            v.addEventListener('seeked', () => {{ window.seekedAt = v.currentTime }}, {{once: true}});
            v.currentTime = 20;
        }}""")
        self.page.wait_for_function(f"() => window.seekedAt !== null && {video}.readyState >= 2", timeout=20_000)
        self.assertAlmostEqual(self.page.evaluate("window.seekedAt"), 20, delta=0.5)
        self.page.screenshot(path=os.path.join(SHOTS, "video-seeked.png"))
        with urllib.request.urlopen(f"{self.endpoint}/_fake-s3/log") as answer:
            gets = [e for e in json.load(answer) if e["method"] == "GET" and e.get("key") == key]
        # Ranged GETs only, some starting near the seek point (the middle): the middle is not reached by reading
        # from the head, and no GET is of the whole file. What was fetched stays (partial, or full once all is).
        self.assertTrue(gets and all(e.get("range") for e in gets), gets)
        spans = [(int(e["range"].split("=")[1].split("-")[0]), e["bytesSent"]) for e in gets]
        spans = [(start, start + sent) for start, sent in spans]
        self.assertTrue(any(size * 0.3 < start < size * 0.7 for start, _ in spans), f"{spans} of {size}")
        self.assertFalse(any(start < size * 0.3 and end > size * 0.5 for start, end in spans), f"{spans} of {size}")
        self.assertIn(self.asset(target)["availability"], ("partial", "full"))
        self.assertEqual(self.page.text_content(f".cell[data-id='{target}'] .duration"), "0:40")

    def test_offline_shows_in_cloud(self):
        self.open_gallery()
        self.page.check("#offline")
        wait_until(lambda: self.info()["network"] == "offline", 5, "offline")
        try:
            target = self.first_cloud_only()
            self.page.dblclick(f".cell[data-id='{target}']")
            self.page.wait_for_selector(f".cell[data-id='{target}'][data-note='in cloud']", timeout=5_000)
            self.assertEqual(self.page.get_attribute(f".cell[data-id='{target}']", "data-badge"), "cloud")
            self.page.screenshot(path=os.path.join(SHOTS, "offline.png"))
        finally:
            self.page.uncheck("#offline")
            wait_until(lambda: self.info()["network"] == "allowed", 5, "back online")

    def pick(self, done, callback=None):
        args = [f"{BIN}/cloudassets", "serve", "--port", "0", "--pick"]
        if callback:
            args += ["--pick-callback", callback]
        picker = subprocess.Popen(args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = picker.stderr.readline()
        url = line.split("open ", 1)[1].strip()
        self.assertIn("pick=multiple", url)
        self.open_gallery(url)
        chosen = self.page.evaluate("[...document.querySelectorAll('.cell')].slice(0, 9).map(c => c.dataset.id)")
        chosen = [chosen[4], chosen[0], chosen[8]]
        for identifier in chosen:
            self.page.click(f".cell[data-id='{identifier}']")
        self.assertEqual(self.page.inner_text("#pick-count"), "3 selected")
        self.page.click("#pick-done" if done else "#pick-cancel")
        out, err = picker.communicate(timeout=15)
        return chosen, picker.returncode, out

    def test_picker_returns_exactly_the_chosen_identifiers(self):
        received = []

        class Callback(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        callback = http.server.HTTPServer(("127.0.0.1", 0), Callback)
        threading.Thread(target=callback.serve_forever, daemon=True).start()
        try:
            chosen, status, out = self.pick(True, f"http://127.0.0.1:{callback.server_port}/picked")
            self.assertEqual(status, 0)
            self.assertEqual(json.loads(out), {"identifiers": chosen})
            self.assertEqual(received, [{"identifiers": chosen}])
            _, status, out = self.pick(False)
            self.assertEqual(status, 15, "Cancel exits with the picker's own status")
            self.assertEqual(out, "")
        finally:
            callback.shutdown()

    def test_album_in_its_own_order_updates_live_and_the_sidebar_counts(self):
        # An album made with the command line (another process): opened by ?album=, in its own order.
        listed = json.loads(self.cli("ls", "--json", "--sort", "key").stdout)
        ids = [row["id"] for row in listed]
        album = self.cli("album", "create", "Browser trip").stdout.strip()
        self.cli("album", "add", album, ids[5], ids[1], ids[3])
        self.open_gallery(self.url + f"&album={album}")
        self.assertEqual(self.ids(), [ids[5], ids[1], ids[3]])
        self.page.wait_for_selector(f'#sidebar .item.active[data-album="{album}"]', timeout=10_000)
        self.assertEqual(self.page.inner_text(f'#sidebar [data-album="{album}"] .n'), "3")
        # Another process inserts at the front: the grid and the sidebar's count follow, live.
        self.cli("album", "add", album, ids[7], "--at", "0")
        self.page.wait_for_function(f"() => gallery.ids.length === 4 && gallery.ids[0] === {json.dumps(ids[7])}",
                                    timeout=15_000)
        self.page.wait_for_function(
            f"() => document.querySelector('#sidebar [data-album=\"{album}\"] .n').textContent === '4'",
            timeout=15_000)
        self.assertIn("Favorites", self.page.inner_text("#sidebar"))
        self.page.screenshot(path=os.path.join(SHOTS, "album.png"))
        # The library again, from the sidebar.
        self.page.click('#sidebar .item[data-album=""]')
        self.page.wait_for_selector("body[data-ready=true]", timeout=10_000)
        self.page.wait_for_function(f"() => gallery.ids.length === {self.info()['count']}", timeout=10_000)
        self.assertNotIn("album=", self.page.url)
        self.cli("album", "rm", album)

    def test_app_toolbar_stays_on_every_view_and_returns_exactly_the_selection(self):
        listed = json.loads(self.cli("ls", "--json", "--sort", "key").stdout)
        ids = [row["id"] for row in listed]
        album = self.cli("album", "create", "Toolbar trip").stdout.strip()
        self.cli("album", "add", album, ids[2], ids[4], ids[6])
        picker = subprocess.Popen([f"{BIN}/cloudassets", "serve", "--port", "0", "--pick", "--action", "Share",
                                   "--action", "Print"], env=self.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            url = picker.stderr.readline().split("open ", 1)[1].strip()
            self.open_gallery(url)
            toolbar = "#app-toolbar button"
            self.page.wait_for_function("() => document.querySelectorAll('#app-toolbar button').length === 2",
                                        timeout=10_000)
            self.assertEqual(self.page.eval_on_selector_all(toolbar, "bs => bs.map(b => b.textContent)"),
                             ["Share", "Print"])
            self.assertTrue(self.page.eval_on_selector_all(toolbar, "bs => bs.every(b => b.disabled)"),
                            "nothing selected: every item is disabled")
            # Select two in the library, then one in the album: the selection spans views.
            for identifier in (ids[7], ids[1]):
                self.page.click(f".cell[data-id='{identifier}']")
            views = [f'#sidebar [data-album="{album}"]', '#sidebar [data-album="smart:favorites"]',
                     '#sidebar [data-album="smart:recentlydeleted"]', '#sidebar [data-album=""]',
                     f'#sidebar [data-album="{album}"]']
            for view in views:
                self.page.click(view)
                self.page.wait_for_selector("body[data-ready=true]", timeout=10_000)
                self.assertTrue(self.page.is_visible("#app-toolbar"), f"the toolbar on {view}")
                self.assertEqual(self.page.eval_on_selector_all(toolbar, "bs => bs.map(b => b.textContent)"),
                                 ["Share", "Print"], f"the items on {view}")
                self.assertTrue(self.page.eval_on_selector_all(toolbar, "bs => bs.every(b => !b.disabled)"))
            self.page.wait_for_function(f"() => gallery.ids.length === 3", timeout=10_000)
            self.page.click(f".cell[data-id='{ids[4]}']")
            self.page.click("#app-toolbar button[data-action=Share]")
            ready, _, _ = select.select([picker.stdout], [], [], 15)
            self.assertTrue(ready, "the action reached the app")
            self.assertEqual(json.loads(picker.stdout.readline()),
                             {"action": "Share", "identifiers": [ids[7], ids[1], ids[4]]})
            self.page.click("#pick-done")
            out, _ = picker.communicate(timeout=15)
            self.assertEqual(picker.returncode, 0)
            self.assertEqual(json.loads(out), {"identifiers": [ids[7], ids[1], ids[4]]})
        finally:
            if picker.poll() is None:
                picker.kill()
                picker.communicate(timeout=10)
            self.cli("album", "rm", album)

    def test_request_without_token_is_403(self):
        answer = self.page.goto(self.base + "/")
        self.assertEqual(answer.status, 403)
        answer = self.page.goto(self.base + "/api/info?token=" + "0" * 64)
        self.assertEqual(answer.status, 403)
        response = self.page.request.post(self.base + f"/api/network?token={self.token}",
                                          data='{"policy":"offline"}')
        self.assertEqual(response.status, 403, "a POST with the token only in the query")


if __name__ == "__main__":
    unittest.main()
