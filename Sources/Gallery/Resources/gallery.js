// CloudAssets gallery: a virtualised grid of one live fetch result.
//
// The server sends a `reset` event (every local identifier, in order) and then one `change` event per library
// change (removed, inserted and changed indexes and moves, PhotoKit's conventions). The page keeps the identifier
// list, applies each change to it in place, and renders only the rows in view: one absolutely positioned cell per
// visible asset, keyed by local identifier, so a cell whose asset did not change stays the same DOM node.
(() => {
  "use strict";

  const token = document.querySelector('meta[name="cloudassets-token"]').content;
  const params = new URLSearchParams(location.search);
  const pickMode = params.get("pick") === "multiple";
  const CELL = 120;
  const GAP = 4;
  const STEP = CELL + GAP;
  const OVERSCAN_ROWS = 2;
  const POOL_LIMIT = 300;
  const CACHE_LIMIT = 4000;

  const viewport = document.getElementById("viewport");
  const canvas = document.getElementById("canvas");
  const $ = (id) => document.getElementById(id);

  const state = {
    ids: [], // the fetch result's local identifiers, in order
    assets: new Map(), // id -> asset (only for ids seen recently: bounded by CACHE_LIMIT)
    cells: new Map(), // id -> cell element in the DOM
    pool: [], // detached cells, reused
    requested: new Set(), // ids whose asset is being fetched
    downloads: new Map(), // id -> fraction of a download in progress
    notes: new Map(), // id -> short note ("in cloud")
    picked: [], // picker: selected ids, in selection order
    focused: null,
    columns: 1,
    token: -1,
    source: null,
    applied: [], // {token, kind, at (Date.now()), count}: for tests and the bench
    album: params.get("album") || "", // the album (or smart album) shown; "" for the library
    albums: new Map(), // album id -> {title, kind} from the sidebar's last load
  };

  // ---- Requests -------------------------------------------------------------------------------------------

  function url(path, query = {}) {
    const search = new URLSearchParams({ token, ...query });
    return `${path}?${search}`;
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "X-CloudAssets-Token": token, "Content-Type": "application/json" },
      body: JSON.stringify(body ?? {}),
    });
    let json = {};
    try {
      json = await response.json();
    } catch (e) {
      json = {};
    }
    if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
    return json;
  }

  function status(text) {
    $("status").textContent = text;
  }

  // ---- Layout and rendering --------------------------------------------------------------------------------

  function layout() {
    state.columns = Math.max(1, Math.floor((viewport.clientWidth - GAP + GAP) / STEP));
    const rows = Math.ceil(state.ids.length / state.columns);
    canvas.style.height = `${rows * STEP + GAP}px`;
  }

  function visibleRange() {
    const firstRow = Math.max(0, Math.floor(viewport.scrollTop / STEP) - OVERSCAN_ROWS);
    const lastRow = Math.ceil((viewport.scrollTop + viewport.clientHeight) / STEP) + OVERSCAN_ROWS;
    const first = firstRow * state.columns;
    const last = Math.min(state.ids.length, lastRow * state.columns);
    return [first, Math.max(first, last)];
  }

  // A video's length as a player shows it: m:ss, or h:mm:ss from an hour.
  function clock(seconds) {
    const total = Math.round(seconds);
    const pad = (n) => String(n).padStart(2, "0");
    const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
    return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
  }

  function makeCell() {
    const cell = document.createElement("div");
    cell.className = "cell";
    cell.style.width = `${CELL}px`;
    cell.style.height = `${CELL}px`;
    cell.innerHTML =
      '<img alt="" hidden><div class="placeholder"></div><span class="badge"></span><span class="fav">♥</span>' +
      '<span class="duration"></span>' +
      '<button class="edited" type="button" title="Edited: show the original">Edited</button>' +
      '<span class="pin">pinned</span><span class="note"></span>' +
      '<svg class="ring" viewBox="0 0 28 28"><circle class="track" cx="14" cy="14" r="12"></circle>' +
      '<circle class="bar" cx="14" cy="14" r="12"></circle></svg>';
    return cell;
  }

  /** A cell for `id`: one released by this render (still in the DOM), else a pooled or new one (appended). */
  function acquire(id, free) {
    let cell = free.pop();
    if (!cell) {
      cell = state.pool.pop() || makeCell();
      canvas.appendChild(cell);
    }
    cell._id = id;
    cell._version = null;
    cell._x = cell._y = -1;
    cell.dataset.id = id;
    delete cell.dataset.badge;
    const img = cell.querySelector("img");
    img.hidden = true;
    img.removeAttribute("src");
    cell.querySelector(".placeholder").textContent = "";
    state.cells.set(id, cell);
    return cell;
  }

  /** Takes a cell off the grid: kept for this render's new cells, then removed from the DOM and pooled. */
  function release(id, cell, free) {
    state.cells.delete(id);
    cell._id = null;
    free.push(cell);
  }

  /** Puts exactly the visible assets' cells in the DOM, each at its place; returns ids whose asset is unknown. */
  function render() {
    layout();
    const [first, last] = visibleRange();
    const visible = new Set();
    for (let index = first; index < last; index++) visible.add(state.ids[index]);
    const free = [];
    for (const [id, cell] of state.cells) if (!visible.has(id)) release(id, cell, free);
    const missing = [];
    for (let index = first; index < last; index++) {
      const id = state.ids[index];
      const cell = state.cells.get(id) || acquire(id, free);
      const x = GAP + (index % state.columns) * STEP;
      const y = GAP + Math.floor(index / state.columns) * STEP;
      if (cell._x !== x || cell._y !== y) {
        cell.style.transform = `translate(${x}px, ${y}px)`;
        cell._x = x;
        cell._y = y;
      }
      const asset = state.assets.get(id);
      if (asset) fill(cell, asset);
      else if (!state.requested.has(id)) missing.push(id);
      decorate(cell, id);
    }
    for (const cell of free) {
      cell.remove();
      if (state.pool.length < POOL_LIMIT) state.pool.push(cell);
    }
    if (missing.length) load(missing);
    trimCache(visible);
    $("count").textContent = `${state.ids.length.toLocaleString()} assets`;
  }

  /** Shows an asset in its cell (only what changed since the cell last showed it). */
  function fill(cell, asset) {
    if (cell._version === asset.version && cell.dataset.favorite === String(asset.favorite)) {
      if (cell.dataset.pinned === String(asset.pinned)) return;
    }
    cell._version = asset.version;
    cell.dataset.badge = asset.badge;
    cell.dataset.favorite = String(asset.favorite);
    cell.dataset.pinned = String(asset.pinned);
    cell.dataset.media = asset.media;
    cell.dataset.edited = String(asset.edited);
    delete cell.dataset.before;
    cell.title = asset.name;
    cell.querySelector(".badge").textContent = asset.badge === "cloud" ? "cloud only" : asset.badge;
    cell.querySelector(".duration").textContent = asset.media === "video" && asset.duration > 0 ? clock(asset.duration) : "";
    const img = cell.querySelector("img");
    const placeholder = cell.querySelector(".placeholder");
    if (asset.thumbnail) {
      const src = url(`/api/thumbnails/${encodeURIComponent(asset.id)}`, { v: asset.version });
      if (img.getAttribute("src") !== src) {
        img.loading = "lazy";
        img.src = src;
      }
      img.hidden = false;
      placeholder.hidden = true;
    } else {
      img.hidden = true;
      img.removeAttribute("src");
      placeholder.hidden = false;
      placeholder.textContent = asset.name;
    }
  }

  /** The per-page marks of a cell: focus, picked, download ring, note. */
  function decorate(cell, id) {
    cell.classList.toggle("focused", state.focused === id);
    cell.classList.toggle("picked", pickMode && state.picked.includes(id));
    const fraction = state.downloads.get(id);
    if (fraction === undefined) {
      delete cell.dataset.downloading;
    } else {
      cell.dataset.downloading = "true";
      cell.dataset.progress = fraction.toFixed(2);
      cell.querySelector(".bar").style.strokeDashoffset = String(75.4 * (1 - fraction));
    }
    const note = state.notes.get(id);
    if (note) {
      cell.dataset.note = note;
      cell.querySelector(".note").textContent = note;
    } else {
      delete cell.dataset.note;
    }
  }

  function trimCache(visible) {
    if (state.assets.size <= CACHE_LIMIT) return;
    for (const id of state.assets.keys()) {
      if (state.assets.size <= CACHE_LIMIT / 2) break;
      if (!visible.has(id)) state.assets.delete(id);
    }
  }

  async function load(ids) {
    for (const id of ids) state.requested.add(id);
    for (let start = 0; start < ids.length; start += 500) {
      const batch = ids.slice(start, start + 500);
      try {
        const response = await fetch(url("/api/assets", { ids: batch.join(",") }));
        const json = await response.json();
        for (const asset of json.assets || []) {
          state.assets.set(asset.id, asset);
          const cell = state.cells.get(asset.id);
          if (cell) fill(cell, asset);
        }
      } catch (e) {
        status(`could not load assets: ${e.message}`);
      } finally {
        for (const id of batch) state.requested.delete(id);
      }
    }
  }

  let scheduled = false;
  function scheduleRender() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      render();
    });
  }

  // ---- Live changes ------------------------------------------------------------------------------------------

  function record(kind, token, count, sent) {
    state.token = token;
    state.applied.push({ kind, token, count, sent, at: Date.now() });
    if (state.applied.length > 1000) state.applied.splice(0, state.applied.length - 1000);
    document.body.dataset.token = String(token);
  }

  function onReset(event) {
    const data = JSON.parse(event.data);
    state.ids = data.ids;
    state.assets.clear();
    $("offline").checked = data.network === "offline";
    render();
    record("reset", data.token, data.count);
    document.body.dataset.ready = "true";
    refreshSidebar();
  }

  /** Applies one change: removals (highest first), insertions (lowest first), moves, then the changed cells. */
  function onChange(event) {
    refreshSidebar();
    const data = JSON.parse(event.data);
    let ids = state.ids;
    const gone = new Set();
    if (data.removed.length) {
      const next = new Array(ids.length - data.removed.length);
      let r = 0;
      let out = 0;
      for (let index = 0; index < ids.length; index++) {
        if (r < data.removed.length && data.removed[r] === index) {
          gone.add(ids[index]);
          state.assets.delete(ids[index]);
          state.downloads.delete(ids[index]);
          r++;
        } else {
          next[out++] = ids[index];
        }
      }
      ids = next;
    }
    const insertedIds = data.insertedAssets.map((asset) => asset.id);
    if (data.inserted.length) {
      const total = ids.length + data.inserted.length;
      const next = new Array(total);
      let j = 0;
      let source = 0;
      for (let position = 0; position < total; position++) {
        if (j < data.inserted.length && data.inserted[j] === position) next[position] = insertedIds[j++];
        else next[position] = ids[source++];
      }
      ids = next;
    }
    if (data.moves.length) {
      // Each moved object at its toIndex, each inserted one at its index, the others in their order around them.
      const after = new Array(ids.length);
      const taken = new Uint8Array(ids.length);
      const placed = new Uint8Array(ids.length);
      for (const [from, to] of data.moves) {
        after[to] = ids[from];
        taken[from] = 1;
        placed[to] = 1;
      }
      for (const index of data.inserted) {
        after[index] = ids[index];
        taken[index] = 1;
        placed[index] = 1;
      }
      let slot = 0;
      for (let index = 0; index < ids.length; index++) {
        if (taken[index]) continue;
        while (placed[slot]) slot++;
        after[slot++] = ids[index];
      }
      ids = after;
    }
    state.ids = ids;
    for (const asset of data.insertedAssets) state.assets.set(asset.id, asset);
    for (const asset of data.changedAssets) state.assets.set(asset.id, asset);
    if (gone.size) {
      state.picked = state.picked.filter((id) => !gone.has(id) || insertedIds.includes(id));
      $("pick-count").textContent = `${state.picked.length} selected`;
      if (gone.has(state.focused)) focus(null);
    }
    if (ids.length !== data.count) {
      // Out of step (should not happen): start again from a fresh reset.
      status("resynchronising");
      connect();
      return;
    }
    render();
    for (const asset of data.changedAssets) {
      const cell = state.cells.get(asset.id);
      if (cell) fill(cell, asset);
      if (asset.id === state.focused) showActions();
    }
    record("change", data.token, data.count, data.sent);
  }

  function onDownload(event) {
    const data = JSON.parse(event.data);
    if (data.fraction !== undefined) {
      state.downloads.set(data.id, data.fraction);
    } else {
      state.downloads.delete(data.id);
      if (data.state === "inCloud") state.notes.set(data.id, "in cloud");
      else if (data.state === "failed") state.notes.set(data.id, "failed");
      else if (data.state === "full") {
        state.notes.delete(data.id);
        if (state.opening === data.id) showOriginal(data.id);
      }
    }
    const cell = state.cells.get(data.id);
    if (cell) decorate(cell, data.id);
  }

  // ---- The sidebar: the library, smart albums, folders and albums ---------------------------------------------

  let sidebarTimer = null;

  /** Reloads the sidebar soon (after a change: counts move), at most every 300 ms. */
  function refreshSidebar() {
    if (sidebarTimer) return;
    sidebarTimer = setTimeout(() => {
      sidebarTimer = null;
      loadSidebar();
    }, 300);
  }

  async function loadSidebar() {
    let data;
    try {
      const response = await fetch(url("/api/collections"));
      data = await response.json();
    } catch (e) {
      return;
    }
    const nav = $("sidebar");
    nav.textContent = "";
    state.albums.clear();
    const item = (id, title, count, depth, kind) => {
      const a = document.createElement("a");
      a.className = "item" + (kind === "folder" ? " folder" : "") + (kind !== "folder" && id === state.album ? " active" : "");
      a.style.paddingLeft = `${12 + depth * 12}px`;
      if (kind !== "folder") {
        a.dataset.album = id;
        a.addEventListener("click", () => openAlbum(id));
        state.albums.set(id, { title, kind });
      }
      const name = document.createElement("span");
      name.textContent = title;
      a.appendChild(name);
      if (count !== null) {
        const n = document.createElement("span");
        n.className = "n";
        n.textContent = String(count);
        a.appendChild(n);
      }
      nav.appendChild(a);
    };
    const heading = (text) => {
      const h = document.createElement("h2");
      h.textContent = text;
      nav.appendChild(h);
    };
    item("", "Library", null, 0, "library");
    heading("Smart albums");
    for (const smart of data.smart) item(smart.id, smart.title, smart.count, 0, "smart");
    if (data.albums.length || data.folders.length) heading("Albums");
    const visit = (folder, depth, seen) => {
      for (const f of data.folders.filter((f) => f.folder === folder)) {
        if (seen.has(f.id)) continue;
        seen.add(f.id);
        item(f.id, f.title, null, depth, "folder");
        visit(f.id, depth + 1, seen);
      }
      for (const a of data.albums.filter((a) => a.folder === folder)) item(a.id, a.title, a.count, depth, "album");
    };
    visit(null, 0, new Set());
    // Albums in a folder this page does not know (another library's, not synced yet) at the top level.
    const known = new Set(data.folders.map((f) => f.id));
    for (const a of data.albums.filter((a) => a.folder !== null && !known.has(a.folder))) {
      item(a.id, a.title, a.count, 0, "album");
    }
    showSortForAlbum();
  }

  /** A user album is shown in its own order unless another sort is chosen. */
  function showSortForAlbum() {
    const album = state.albums.get(state.album);
    const own = $("sort").querySelector('option[value="album"]');
    own.hidden = !(album && album.kind === "album");
    if (own.hidden && $("sort").value === "album") $("sort").value = "newest";
  }

  function openAlbum(id) {
    state.album = id;
    const album = state.albums.get(id);
    if (album && album.kind === "album") $("sort").value = "album";
    showSortForAlbum();
    const next = new URLSearchParams(location.search);
    if (id) next.set("album", id);
    else next.delete("album");
    history.replaceState(null, "", `${location.pathname}?${next}`);
    for (const a of $("sidebar").querySelectorAll(".item[data-album]")) {
      a.classList.toggle("active", a.dataset.album === id);
    }
    connect();
  }

  function connect() {
    if (state.source) state.source.close();
    document.body.dataset.ready = "false";
    const query = { sort: $("sort").value };
    if (state.album) query.album = state.album;
    if ($("state").value) query.state = $("state").value;
    if ($("media").value) query.media = $("media").value;
    const source = new EventSource(url("/api/events", query));
    source.addEventListener("reset", onReset);
    source.addEventListener("change", onChange);
    source.addEventListener("download", onDownload);
    source.addEventListener("network", (event) => {
      $("offline").checked = JSON.parse(event.data).network === "offline";
    });
    source.onerror = () => status("reconnecting…");
    source.onopen = () => status("");
    state.source = source;
  }

  // ---- Actions -----------------------------------------------------------------------------------------------

  function focus(id) {
    const previous = state.focused;
    state.focused = id;
    for (const other of [previous, id]) {
      const cell = other && state.cells.get(other);
      if (cell) decorate(cell, other);
    }
    $("actions").hidden = pickMode || !id;
    showActions();
    enableToolbar();
  }

  /** The action bar for the focused asset: only the toggles that apply (pin or unpin, favourite or not). */
  function showActions() {
    const asset = state.focused && state.assets.get(state.focused);
    $("selected-name").textContent = asset ? asset.name : "";
    $("act-pin").hidden = Boolean(asset && asset.pinned);
    $("act-unpin").hidden = !(asset && asset.pinned);
    $("act-favorite").hidden = Boolean(asset && asset.favorite);
    $("act-unfavorite").hidden = !(asset && asset.favorite);
  }

  async function open(id) {
    const asset = state.assets.get(id);
    if (asset && asset.media === "video") return play(id);
    state.opening = id;
    state.notes.delete(id);
    try {
      const answer = await post(`/api/assets/${encodeURIComponent(id)}/open`);
      if (answer.state === "full") showOriginal(id);
      else if (answer.state === "inCloud") state.notes.set(id, "in cloud");
      else if (answer.state === "downloading" && !state.downloads.has(id)) state.downloads.set(id, 0);
    } catch (e) {
      status(`open failed: ${e.message}`);
    }
    const cell = state.cells.get(id);
    if (cell) decorate(cell, id);
  }

  function showOriginal(id) {
    $("viewer-video").hidden = true;
    $("viewer-image").hidden = false;
    $("viewer-image").src = url(`/api/originals/${encodeURIComponent(id)}`);
    $("viewer").hidden = false;
  }

  // A video plays from the library's playback URL: streamed by range, seekable while it is still in the cloud.
  async function play(id) {
    try {
      const response = await fetch(url(`/api/play/${encodeURIComponent(id)}`));
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.statusText);
      const video = $("viewer-video");
      $("viewer-image").hidden = true;
      $("viewer-image").removeAttribute("src");
      video.hidden = false;
      video.dataset.id = id;
      video.src = answer.url;
      $("viewer").hidden = false;
    } catch (e) {
      status(`play failed: ${e.message}`);
    }
  }

  async function act(action) {
    const id = state.focused;
    if (!id) return;
    if (action === "open") return open(id);
    try {
      await post(`/api/assets/${encodeURIComponent(id)}/${action}`);
      status(`${action}: done`);
    } catch (e) {
      status(`${action} failed: ${e.message}`);
    }
  }

  function togglePick(id) {
    const at = state.picked.indexOf(id);
    if (at >= 0) state.picked.splice(at, 1);
    else state.picked.push(id);
    $("pick-count").textContent = `${state.picked.length} selected`;
    const cell = state.cells.get(id);
    if (cell) decorate(cell, id);
    enableToolbar();
  }

  // ---- The app's toolbar: its items stay in the header, whatever view the page shows ----------------------

  /** The selection an app's item acts on: the picker's, in selection order; in the gallery, the asset in focus. */
  function selection() {
    if (pickMode) return state.picked.slice();
    return state.focused ? [state.focused] : [];
  }

  function enableToolbar() {
    const count = selection().length;
    for (const button of $("app-toolbar").querySelectorAll("button")) {
      button.disabled = count < Number(button.dataset.minimum);
    }
  }

  async function loadToolbar() {
    let items = [];
    try {
      const response = await fetch(url("/api/toolbar"));
      items = (await response.json()).items || [];
    } catch (e) {
      return;
    }
    const bar = $("app-toolbar");
    bar.textContent = "";
    for (const item of items) {
      const button = document.createElement("button");
      button.textContent = item.title;
      button.dataset.action = item.id;
      button.dataset.minimum = String(item.minimumSelection);
      button.addEventListener("click", async () => {
        const chosen = selection();
        try {
          const answer = await post(`/api/toolbar/${encodeURIComponent(item.id)}`, { identifiers: chosen });
          status(`${item.title}: ${answer.count} assets`);
        } catch (e) {
          status(`${item.title} failed: ${e.message}`);
        }
      });
      bar.appendChild(button);
    }
    enableToolbar();
  }

  async function finishPick(done) {
    try {
      if (done) await post("/api/pick", { identifiers: state.picked });
      else await post("/api/pick/cancel");
      document.body.dataset.picker = done ? "done" : "cancelled";
      status(done ? `Returned ${state.picked.length} assets: you can close this tab.` : "Cancelled.");
      $("pick-done").disabled = $("pick-cancel").disabled = true;
    } catch (e) {
      status(`picker: ${e.message}`);
    }
  }

  // Before/after: the "Edited" badge swaps an edited asset's thumbnail for its original's and back.
  canvas.addEventListener("click", (event) => {
    const toggle = event.target.closest(".edited");
    if (!toggle) return;
    event.stopPropagation();
    const cell = toggle.closest(".cell");
    const asset = cell && state.assets.get(cell._id);
    if (!asset) return;
    const before = cell.dataset.before !== "true";
    const img = cell.querySelector("img");
    const params = before ? { v: asset.version, version: "original" } : { v: asset.version };
    img.onerror = before ? () => { toggle.textContent = "No original thumbnail"; } : null;
    img.src = url(`/api/thumbnails/${encodeURIComponent(asset.id)}`, params);
    cell.dataset.before = String(before);
    toggle.textContent = before ? "Original" : "Edited";
  }, true);

  canvas.addEventListener("click", (event) => {
    const cell = event.target.closest(".cell");
    if (!cell || !cell._id) return;
    if (pickMode) togglePick(cell._id);
    else focus(cell._id);
  });
  canvas.addEventListener("dblclick", (event) => {
    const cell = event.target.closest(".cell");
    if (cell && cell._id && !pickMode) open(cell._id);
  });
  for (const action of ["open", "pin", "unpin", "evict", "favorite", "unfavorite", "delete"]) {
    $(`act-${action}`).addEventListener("click", () => act(action));
  }
  $("viewer-close").addEventListener("click", () => {
    $("viewer").hidden = true;
    $("viewer-image").removeAttribute("src");
    const video = $("viewer-video");
    video.pause();
    video.removeAttribute("src");
    video.load();
    video.hidden = true;
  });
  $("offline").addEventListener("change", async (event) => {
    try {
      await post("/api/network", { policy: event.target.checked ? "offline" : "allowed" });
    } catch (e) {
      status(`network: ${e.message}`);
    }
  });
  for (const id of ["sort", "state", "media"]) $(id).addEventListener("change", connect);
  viewport.addEventListener("scroll", scheduleRender, { passive: true });
  window.addEventListener("resize", scheduleRender);
  loadToolbar();
  if (pickMode) {
    $("picker").hidden = false;
    $("pick-done").addEventListener("click", () => finishPick(true));
    $("pick-cancel").addEventListener("click", () => finishPick(false));
  }

  // For tests and the bench: read-only views of the page's state.
  window.gallery = {
    get ids() {
      return state.ids;
    },
    get applied() {
      return state.applied;
    },
    get token() {
      return state.token;
    },
    cell: (id) => state.cells.get(id) || null,
    render: () => render(),
    cellCount: () => state.cells.size,
    picked: () => state.picked.slice(),
    get album() {
      return state.album;
    },
  };

  if (state.album) $("sort").value = "album";
  connect();
  loadSidebar();
})();
