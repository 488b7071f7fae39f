/* global document, window, location, fetch, FormData, XMLHttpRequest, URL, URLSearchParams, Blob, sessionStorage, setTimeout, clearTimeout */
/*
 * The console: a plain client of the public API (no framework, no build step). Every call goes to
 * /api/202203010900/<resource>.php on this origin and reads the {status, data} envelope; the session is
 * the httpOnly cookie the login sets, so this script never sees or stores it. Only the user's id, name and
 * role are kept in sessionStorage, because logging out needs the id and GET /sessions does not give it.
 */
'use strict';

(function () {
  const API = '/api/202203010900/';
  const STATUS = ['Created', 'Pending', 'Running', 'Finished', 'Failed', 'Aborted'];
  const ENDED = [3, 4, 5];
  const POLL_MS = 1000;
  const USER_KEY = 'mtcs-console-user';
  const TZ = timeZone();

  const state = { user: null, jobId: null, timer: null, rows: null, chartUrl: null, queueTimer: null, selection: null, panel: null, seriesKey: null };
  const $ = (id) => document.getElementById(id);

  function timeZone() {
    try {
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      return zone && zone.includes('/') ? zone : 'UTC';
    } catch {
      return 'UTC';
    }
  }

  class ApiError extends Error {}

  /** An envelope's `data`, or its message thrown. */
  function dataOf(envelope) {
    if (Number(envelope.status) !== 0) throw new ApiError(String(envelope.data));
    return envelope.data;
  }

  /** Reads a reply as the envelope; answers `data` or throws its message. */
  async function envelopeOf(res, what) {
    if (!res.ok) throw new Error(`${what}: HTTP ${res.status}`);
    return dataOf(await res.json());
  }

  /** One call: GET and DELETE carry their fields in the query, the others as an urlencoded body. */
  async function api(method, resource, fields = {}) {
    const all = { tz: TZ, ...fields };
    const url = new URL(`${API}${resource}.php`, location.origin);
    const inQuery = method === 'GET' || method === 'DELETE';
    if (inQuery) for (const [k, v] of Object.entries(all)) url.searchParams.set(k, String(v));
    const res = await fetch(url, { method, credentials: 'same-origin', body: inQuery ? undefined : new URLSearchParams(all) });
    return envelopeOf(res, `${method} ${resource}`);
  }

  // ---------- messages ----------

  function say(text) {
    const box = $('message');
    box.textContent = text;
    box.hidden = !text;
  }

  function failed(error) {
    say(error instanceof ApiError ? error.message : `The service could not be reached (${error && error.message ? error.message : error}).`);
  }

  function cell(row, text, header) {
    const td = document.createElement(header ? 'th' : 'td');
    if (header) td.scope = 'row';
    td.textContent = text === null || text === undefined ? '' : String(text);
    row.appendChild(td);
    return td;
  }

  function headerRow(head, headers) {
    const tr = head.insertRow();
    for (const h of headers) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = h;
      tr.appendChild(th);
    }
  }

  function table(caption, headers, rows) {
    const t = document.createElement('table');
    const c = document.createElement('caption');
    c.textContent = caption;
    t.appendChild(c);
    headerRow(t.createTHead(), headers);
    const body = t.createTBody();
    for (const r of rows) {
      const tr = body.insertRow();
      r.forEach((v, i) => cell(tr, v, i === 0));
    }
    return t;
  }

  const figure = (n) => (n === null || n === undefined || !Number.isFinite(Number(n)) ? 'n/a' : String(Number(Number(n).toPrecision(4))));

  // ---------- many series (an upload keyed by one or more columns) ----------

  /** The chart's series= item for a key: values joined with |; a backslash, comma or | inside a value is escaped with a backslash. */
  const seriesParam = (key) => key.map((v) => String(v).replace(/[\\,|]/g, (c) => `\\${c}`)).join('|');
  const seriesLabel = (key) => key.join(' | ');

  /** The panel part of a selection report with a key, or null for a job of one series. */
  const panelOf = (selection) => (selection && selection.panel && selection.panel.keys && selection.panel.keys.length > 0 ? selection.panel : null);

  /** The series of a panel job in the selection report's order (the upload's), as the chart counts them. */
  const seriesOf = (panel) => panel.perSeries.map((s) => ({ ...s, key: s.key.map((v) => String(v).trim()) }));

  /** Whether a forecast row belongs to the series picked (every row when none is). */
  function inPicked(row) {
    if (!state.panel || !state.seriesKey) return true;
    return state.panel.keys.every((k, i) => String(row[k] === null || row[k] === undefined ? '' : row[k]).trim() === state.seriesKey[i]);
  }

  /** A panel job: the picker lists its series (the chart's default, the first ones, first); a job of one series hides it. */
  function setUpSeries(selection) {
    const panel = panelOf(selection);
    state.panel = panel;
    state.seriesKey = null;
    const picker = $('series-picker');
    const select = $('series');
    picker.hidden = !panel;
    select.replaceChildren();
    if (!panel) return;
    const series = seriesOf(panel);
    const first = Math.min(series.length, 12);
    select.appendChild(new window.Option(series.length > first ? `First ${first} of ${series.length} series` : `All ${series.length} series`, ''));
    series.forEach((s, i) => select.appendChild(new window.Option(`${seriesLabel(s.key)}${s.note ? ' (no model of its own)' : ''}`, String(i))));
    select.dataset.series = JSON.stringify(series.map((s) => s.key));
    $('series-hint').textContent = `${series.length} series keyed by ${panel.keys.join(' | ')}; ${panel.shortest === panel.longest ? `${panel.longest} known rows each` : `${panel.shortest} to ${panel.longest} known rows`}. The chart and the forecast table show the series picked.`;
  }

  /** The picker moved: the chart draws that series, the table shows its rows. */
  function pickSeries() {
    const value = $('series').value;
    const keys = JSON.parse($('series').dataset.series || '[]');
    state.seriesKey = value === '' ? null : keys[Number(value)];
    const jobId = state.jobId;
    void showChart(jobId, state.selection);
    showForecastRows();
  }

  // ---------- session ----------

  function signedIn(user) {
    state.user = user;
    sessionStorage.setItem(USER_KEY, JSON.stringify(user));
    document.body.dataset.state = 'signed-in';
    $('whoami').textContent = `Signed in as ${user.name} (${user.role})`;
    $('logout').hidden = false;
    $('login').hidden = true;
    $('new-job').hidden = false;
    $('jobs').hidden = false;
    $('admin').hidden = user.role !== 'admin';
    void loadApplications();
    void loadJobs();
    if (user.role === 'admin') void loadQueue();
  }

  function signedOut() {
    state.user = null;
    sessionStorage.removeItem(USER_KEY);
    stopPolling();
    clearTimeout(state.queueTimer);
    document.body.dataset.state = 'signed-out';
    $('whoami').textContent = 'Not signed in';
    $('logout').hidden = true;
    for (const id of ['new-job', 'job', 'jobs', 'admin']) $(id).hidden = true;
    $('login').hidden = false;
  }

  async function login(event) {
    event.preventDefault();
    say('');
    try {
      const body = new FormData($('login-form'));
      const res = await fetch(`${API}sessions.php`, { method: 'POST', credentials: 'same-origin', body });
      const [who] = await envelopeOf(res, 'POST sessions');
      $('password').value = '';
      signedIn({ id: Number(who.User_Id), name: who.Name, role: who.User_Role });
      $('new-job-title').focus();
    } catch (error) {
      failed(error);
    }
  }

  /** POST /users, then the sign-in form is ready with the new e-mail. */
  async function register(event) {
    event.preventDefault();
    say('');
    try {
      const form = $('register-form');
      const res = await fetch(`${API}users.php`, { method: 'POST', credentials: 'same-origin', body: new URLSearchParams(new FormData(form)) });
      await envelopeOf(res, 'POST users');
      $('email').value = $('reg-email').value;
      form.reset();
      $('register-status').textContent = 'Account created: sign in with it above.';
      $('password').focus();
    } catch (error) {
      failed(error);
    }
  }

  async function logout() {
    try {
      if (state.user && state.user.id) await api('DELETE', 'session', { user_id: state.user.id });
    } catch (error) {
      failed(error);
    }
    signedOut();
    $('email').focus();
  }

  /** A page opened with a valid cookie continues that session. */
  async function resume() {
    try {
      const check = await api('GET', 'sessions');
      let user = null;
      try {
        user = JSON.parse(sessionStorage.getItem(USER_KEY) || 'null');
      } catch {
        user = null;
      }
      if (!user || !user.id) {
        const me = check.user.role === 'admin' ? [] : await api('GET', 'users');
        user = { id: me[0] ? Number(me[0].id) : 0, name: check.user.name, role: check.user.role };
      }
      signedIn({ ...user, name: check.user.name, role: check.user.role });
    } catch {
      signedOut();
    }
  }

  // ---------- new job and upload ----------

  async function loadApplications() {
    try {
      const apps = await api('GET', 'applications');
      const select = $('app');
      select.replaceChildren(...apps.map((a) => new window.Option(a.name, a.name)));
      const forecast = apps.findIndex((a) => a.name === 'forecast');
      if (forecast >= 0) select.selectedIndex = forecast;
    } catch (error) {
      failed(error);
    }
  }

  /** A consumer needs a subscription to the application; administrators may use any. */
  async function ensureSubscribed(app) {
    if (state.user.role === 'admin') return;
    const subscriptions = await api('GET', 'subscriptions', { status: 'subscribed' });
    if (!subscriptions.some((s) => s.name === app)) await api('POST', 'subscriptions', { app });
  }

  /** POST /data through XMLHttpRequest, the one browser API that reports upload progress. */
  function upload(jobId, file, onProgress) {
    return new Promise((resolve, reject) => {
      const form = new FormData();
      // The fields before the file, so the service knows the job when the file's bytes arrive.
      form.append('tz', TZ);
      form.append('job_id', String(jobId));
      form.append('file', '1');
      form.append('Servicefile', file, file.name);
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `${API}data.php`);
      xhr.withCredentials = true;
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) onProgress(e.loaded / e.total);
      };
      xhr.onload = () => {
        let envelope;
        try {
          envelope = JSON.parse(xhr.responseText);
        } catch {
          envelope = null;
        }
        if (xhr.status < 200 || xhr.status > 299 || !envelope) return reject(new Error(`POST data: HTTP ${xhr.status}`));
        try {
          resolve(dataOf(envelope));
        } catch (error) {
          reject(error);
        }
      };
      xhr.onerror = () => reject(new Error('the upload was interrupted'));
      xhr.send(form);
    });
  }

  async function createJob(event) {
    event.preventDefault();
    say('');
    const file = $('csv').files[0];
    const app = $('app').value;
    if (!file) return say('Choose a CSV file to upload.');
    const button = $('create');
    const bar = $('upload-progress');
    const status = $('upload-status');
    button.disabled = true;
    bar.value = 0;
    try {
      await ensureSubscribed(app);
      const description = $('description').value.trim();
      const created = await api('POST', 'jobs', { app_name: app, newTraining: 1, ...(description ? { description } : {}) });
      status.textContent = `Job ${created.job_id} created; uploading ${file.name}…`;
      const confirmation = await upload(created.job_id, file, (share) => {
        bar.value = Math.round(share * 100);
        bar.textContent = `${bar.value}%`;
      });
      bar.value = 100;
      status.textContent = `Uploaded: ${confirmation}`;
      $('job-form').reset();
      void loadJobs();
      openJob(created.job_id);
    } catch (error) {
      status.textContent = 'Upload failed.';
      failed(error);
    } finally {
      button.disabled = false;
    }
  }

  // ---------- one job ----------

  function stopPolling() {
    clearTimeout(state.timer);
    state.timer = null;
  }

  function openJob(jobId) {
    stopPolling();
    state.jobId = Number(jobId);
    state.rows = null;
    state.panel = null;
    state.seriesKey = null;
    $('series-picker').hidden = true;
    if (state.chartUrl) URL.revokeObjectURL(state.chartUrl);
    state.chartUrl = null;
    $('job').hidden = false;
    $('job').dataset.status = '';
    $('results').hidden = true;
    $('job-id').textContent = String(jobId);
    $('job-status').textContent = '…';
    $('job-text').textContent = '';
    $('advance').value = 0;
    $('advance-text').textContent = '0';
    $('abort').disabled = true;
    $('job-title').focus();
    void poll();
  }

  /** GET /jobs_progress progress=2 once a second: the status record carries Advance, status, worker and, at the end, the selection. */
  async function poll() {
    const jobId = state.jobId;
    let stat;
    try {
      stat = (await api('GET', 'jobs_progress', { job_id: jobId, progress: 2 })).Stat;
    } catch (error) {
      if (jobId === state.jobId) failed(error);
      return;
    }
    if (jobId !== state.jobId) return;
    const status = Number(stat.Status);
    $('job').dataset.status = String(status);
    $('job-status').textContent = stat.Status_Name || STATUS[status] || String(status);
    $('job-text').textContent = stat.Text || '';
    $('advance').value = stat.Advance;
    $('advance-text').textContent = String(stat.Advance);
    $('abort').disabled = !(status === 1 || status === 2);
    if (!ENDED.includes(status)) {
      state.timer = setTimeout(() => void poll(), POLL_MS);
      return;
    }
    void loadJobs();
    if (status === 3) await showResults(jobId, stat);
    else if (status === 4) say(`Job ${jobId} failed${stat.Text ? `: ${stat.Text}` : ''}.`);
  }

  async function abort() {
    say('');
    try {
      await api('POST', 'job_aborts', { job_id: state.jobId });
      stopPolling();
      void poll();
    } catch (error) {
      failed(error);
    }
  }

  async function showResults(jobId, stat) {
    $('results').hidden = false;
    $('explanation').textContent = stat.Explanation || '';
    state.selection = stat.Selection || null;
    setUpSeries(stat.Selection);
    showLeaderboard(stat.Selection);
    await Promise.all([showChart(jobId, stat.Selection), showForecast(jobId, stat.Selection, stat.Explanation || '')]);
    $('results').dataset.ready = 'true';
  }

  /** The chart is fetched rather than linked, so an envelope error (no forecast, no access) shows as text. */
  async function showChart(jobId, selection) {
    const img = $('chart');
    const status = $('chart-status');
    const picked = state.seriesKey;
    img.hidden = true;
    status.textContent = 'Loading the chart…';
    try {
      const url = new URL(`${API}charts.php`, location.origin);
      const query = { tz: TZ, job_id: String(jobId), format: 'svg' };
      if (picked) query.series = seriesParam(picked);
      url.search = new URLSearchParams(query).toString();
      const res = await fetch(url, { credentials: 'same-origin' });
      if (!res.ok) throw new Error(`GET charts: HTTP ${res.status}`);
      // A later pick (or another job) asked for another chart meanwhile: this one is stale.
      if (jobId !== state.jobId || picked !== state.seriesKey) return;
      if ((res.headers.get('content-type') || '').includes('json')) {
        const envelope = await res.json();
        status.textContent = `No chart: ${envelope.data}`;
        return;
      }
      const blob = await res.blob();
      if (jobId !== state.jobId || picked !== state.seriesKey) return;
      if (state.chartUrl) URL.revokeObjectURL(state.chartUrl);
      state.chartUrl = URL.createObjectURL(blob);
      img.src = state.chartUrl;
      const outputs = selection ? selection.outputs.map((o) => o.column).join(', ') : 'the outputs';
      const which = picked ? ` of series ${seriesLabel(picked)}` : state.panel ? ' of the first series, one small chart each' : '';
      img.alt = `Chart of job ${jobId}: history and forecast of ${outputs}${which}, with the 80% and 95% bands`;
      await img.decode().catch(() => undefined);
      img.hidden = false;
      status.textContent = '';
      $('chart-caption').textContent = chartCaption(selection, picked);
    } catch (error) {
      status.textContent = `No chart: ${error instanceof ApiError ? error.message : 'the chart could not be loaded'}.`;
    }
  }

  /** The winners under the chart: per output; for a panel job, the picked series' own (or how many series). */
  function chartCaption(selection, picked) {
    if (!selection) return '';
    if (state.panel && picked) {
      const own = state.panel.perSeries.find((s) => s.key.length === picked.length && s.key.every((v, i) => String(v).trim() === picked[i]));
      if (!own) return `${seriesLabel(picked)}: not in the selection report`;
      // A series' own errors are in its units (MAE) or an error rate; the report's MASE summarises all series.
      const metric = (column) => ((selection.outputs.find((o) => o.column === column) || {}).kind === 'categorical' ? 'error rate' : 'MAE');
      const outputs = own.outputs.map((o) => `${o.column}: ${o.chosen}, backtest ${metric(o.column)} ${figure(o.error)} (its best naive ${o.baseline.name} ${figure(o.baseline.error)})`);
      return `${seriesLabel(picked)}: ${[...outputs, ...(own.note ? [own.note] : [])].join('; ')}`;
    }
    if (state.panel) return `${state.panel.series} series, each forecast by its own winner; pick one above to see its figures.`;
    return selection.outputs.map((o) => `${o.column}: ${o.chosen}, backtest ${o.metric} ${figure(o.error)} (best naive ${o.baseline.name} ${figure(o.baseline.error)})`).join('; ');
  }

  function showLeaderboard(selection) {
    const box = $('leaderboard');
    box.replaceChildren();
    if (!selection) {
      box.textContent = 'This job was trained by the single neural network: there is no backtest leaderboard.';
      return;
    }
    const panel = panelOf(selection);
    if (panel) {
      // Each series chose its own model: how often each family won says more than one table of scores.
      const wins = Object.entries(panel.wins || {}).filter(([, n]) => n > 0).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
      const total = wins.reduce((sum, [, n]) => sum + n, 0);
      box.appendChild(
        table(
          `How often each family won: ${panel.series} series x ${selection.outputs.length} output${selection.outputs.length === 1 ? '' : 's'}, each chosen on its own backtest`,
          ['Family', 'Won', 'Share'],
          wins.map(([name, n]) => [name, String(n), total ? `${Math.round((100 * n) / total)}%` : 'n/a']),
        ),
      );
    }
    for (const output of selection.outputs) {
      const ranked = [...output.candidates].sort((a, b) => (a.error === null) - (b.error === null) || (a.error ?? 0) - (b.error ?? 0));
      const rows = ranked.map((c, i) => [
        c.error === null ? '-' : String(i + 1),
        c.name + (c.name === output.chosen ? ' (chosen)' : '') + (c.name === output.baseline.name ? ' (best naive)' : ''),
        c.description || '',
        figure(c.error),
        c.note || '',
      ]);
      if (!output.candidates.some((c) => c.name === output.chosen)) rows.unshift(['*', `${output.chosen} (chosen)`, output.description, figure(output.error), '']);
      const over = panel ? `, over the ${panel.series} series` : '';
      box.appendChild(table(`${output.column}: backtest ${output.metric} (lower is better)${over}, ${selection.scheme}, ${selection.windows} window(s) of ${selection.horizon}`, ['Rank', 'Model', 'Description', output.metric, 'Note'], rows));
    }
  }

  /** GET /data output=1 intervals=1: the forecast rows with their bounds, for the table, the band widths and the download. */
  async function showForecast(jobId, selection, explanation) {
    try {
      const rows = await api('GET', 'data', { job_id: jobId, output: 1, intervals: 1 });
      if (jobId !== state.jobId) return;
      state.rows = rows;
      showForecastRows();
      showIntervals(rows, selection, explanation);
    } catch (error) {
      failed(error);
    }
  }

  /** The first rows of the forecast, of the series picked when there are many. */
  function showForecastRows() {
    const rows = state.rows || [];
    const columns = Object.keys(rows[0] || {});
    const head = $('forecast').tHead;
    const body = $('forecast').tBodies[0];
    head.replaceChildren();
    body.replaceChildren();
    headerRow(head, columns);
    const shown = rows.filter(inPicked);
    for (const row of shown.slice(0, 24)) {
      const tr = body.insertRow();
      for (const c of columns) cell(tr, row[c]);
    }
    $('forecast').caption.textContent = state.seriesKey
      ? `First rows of the forecast of ${seriesLabel(state.seriesKey)} (${shown.length} rows; with 80% and 95% bounds where the model gives them)`
      : 'First rows of the forecast (with 80% and 95% bounds where the model gives them)';
  }

  /**
   * How often each band held on the backtest: the selection's intervalCoverage when the reply carries it,
   * else the figures the explanation line states for the column.
   */
  function coverageOf(output, explanation) {
    const c = output.intervalCoverage;
    if (c) return { p80: `${Math.round(c.p80 * 100)}%`, p95: `${Math.round(c.p95 * 100)}%`, rows: c.rows };
    const escaped = output.column.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(`(?:^|; )${escaped}: [^;]*?; intervals on the backtest: 80% band held (\\d+%), 95% band held (\\d+%) of (\\d+) rows`).exec(explanation);
    return m ? { p80: m[1], p95: m[2], rows: Number(m[3]) } : { p80: 'n/a', p95: 'n/a', rows: 0 };
  }

  /** Per numeric output: backtest coverage of the 80% and 95% bands, how many forecast rows have bounds and how wide they are. */
  function showIntervals(rows, selection, explanation) {
    const box = $('intervals');
    box.replaceChildren();
    const numeric = selection ? selection.outputs.filter((o) => o.kind === 'numeric') : [];
    const lines = [];
    for (const output of numeric) {
      const column = output.column;
      const width = (level) => {
        const spans = rows
          .map((r) => Number(r[`${column}_hi${level}`]) - Number(r[`${column}_lo${level}`]))
          .filter((w, i) => rows[i][`${column}_hi${level}`] !== '' && rows[i][`${column}_hi${level}`] !== undefined && Number.isFinite(w));
        return { n: spans.length, mean: spans.length ? spans.reduce((a, b) => a + b, 0) / spans.length : null, last: spans.length ? spans[spans.length - 1] : null };
      };
      const w80 = width(80);
      const w95 = width(95);
      const held = coverageOf(output, explanation);
      lines.push([column, held.p80, held.p95, held.rows ? String(held.rows) : 'n/a', `${w80.n} of ${rows.length}`, figure(w80.mean), figure(w95.mean)]);
    }
    if (lines.length === 0) {
      box.textContent = 'This forecast has no prediction intervals (categorical outputs, or the single neural network).';
      return;
    }
    box.appendChild(
      table(
        'Bands meant to hold the true value 80% and 95% of the time: how often they held on the backtest, and their width on the forecast',
        ['Output', 'Backtest: 80% band held', 'Backtest: 95% band held', 'Backtest rows', 'Forecast rows with bands', 'Mean 80% width', 'Mean 95% width'],
        lines,
      ),
    );
  }

  function csvOf(rows) {
    const columns = Object.keys(rows[0] || {});
    const quote = (v) => {
      const s = v === null || v === undefined ? '' : String(v);
      return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
    };
    return [columns.map(quote).join(','), ...rows.map((r) => columns.map((c) => quote(r[c])).join(','))].join('\r\n') + '\r\n';
  }

  function download() {
    if (!state.rows) return say('The forecast is not loaded yet.');
    const url = URL.createObjectURL(new Blob([csvOf(state.rows)], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `forecast-job-${state.jobId}.csv`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  // ---------- lists ----------

  async function loadJobs() {
    try {
      const jobs = await api('GET', 'jobs', { job_id: 0 });
      $('jobs-table').caption.textContent = state.user && state.user.role === 'admin' ? 'Jobs of every user, newest first' : 'Your jobs, newest first';
      jobs.sort((a, b) => Number(b.Id) - Number(a.Id));
      const body = $('jobs-table').tBodies[0];
      body.replaceChildren();
      for (const job of jobs.slice(0, 50)) {
        const tr = body.insertRow();
        cell(tr, job.Id, true);
        cell(tr, job.app_name);
        cell(tr, STATUS[Number(job.Status)] || job.Status);
        cell(tr, job.DateTime);
        cell(tr, job.User_Name);
        const open = document.createElement('button');
        open.type = 'button';
        open.textContent = 'Open';
        open.setAttribute('aria-label', `Open job ${job.Id}`);
        open.addEventListener('click', () => openJob(job.Id));
        tr.insertCell().appendChild(open);
      }
    } catch (error) {
      failed(error);
    }
  }

  /** Administrators: pending and running jobs of everyone (GET /jobs status_filter), each with its worker (progress=2). */
  async function loadQueue() {
    clearTimeout(state.queueTimer);
    if (!state.user || state.user.role !== 'admin') return;
    try {
      const active = await api('GET', 'jobs', { job_id: 0, status_filter: '1,2' });
      active.sort((a, b) => Number(a.Id) - Number(b.Id));
      const stats = await Promise.all(active.slice(0, 50).map((j) => api('GET', 'jobs_progress', { job_id: j.Id, progress: 2 }).then((r) => r.Stat, () => null)));
      const body = $('queue-table').tBodies[0];
      body.replaceChildren();
      const workers = new Map();
      active.slice(0, 50).forEach((job, i) => {
        const s = stats[i];
        const tr = body.insertRow();
        cell(tr, job.Id, true);
        cell(tr, job.User_Name);
        cell(tr, STATUS[Number(job.Status)]);
        cell(tr, s ? `${s.Advance}%` : '');
        cell(tr, s && s.Worker);
        cell(tr, s && s.Started);
        cell(tr, s && s.Heartbeat);
        if (s && s.Worker) workers.set(s.Worker, [...(workers.get(s.Worker) || []), `job ${job.Id} (${s.Advance}%)`]);
      });
      const pending = active.filter((j) => Number(j.Status) === 1);
      const oldest = pending[0];
      $('queue-summary').textContent =
        `${pending.length} pending, ${active.length - pending.length} running` + (oldest ? `; the oldest pending job (${oldest.Id}) was created ${oldest.DateTime}` : '') + '.';
      const list = $('workers');
      list.replaceChildren();
      for (const [worker, jobs] of workers) {
        const li = document.createElement('li');
        li.textContent = `${worker}: ${jobs.join(', ')}`;
        list.appendChild(li);
      }
      if (workers.size === 0) {
        const li = document.createElement('li');
        li.textContent = 'No worker is running a job (idle workers are not listed by the API).';
        list.appendChild(li);
      }
    } catch (error) {
      failed(error);
    }
    state.queueTimer = setTimeout(() => void loadQueue(), 5000);
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('login-form').addEventListener('submit', (e) => void login(e));
    $('job-form').addEventListener('submit', (e) => void createJob(e));
    $('register-form').addEventListener('submit', (e) => void register(e));
    $('logout').addEventListener('click', () => void logout());
    $('abort').addEventListener('click', () => void abort());
    $('download').addEventListener('click', download);
    $('series').addEventListener('change', pickSeries);
    $('refresh').addEventListener('click', () => {
      void loadJobs();
      void loadQueue();
    });
    void resume();
  });
})();
