// LobbyTalks pages: forms and buttons call the same-origin JSON APIs; pages render on the
// server. No framework, no build step. Errors are shown next to what caused them and a
// failed submit never clears what was typed.
'use strict';

(function () {
  const stringsNode = document.getElementById('page-strings');
  const S = stringsNode ? JSON.parse(stringsNode.textContent) : {};
  const lang = document.documentElement.lang.startsWith('en') ? 'en' : 'zh';
  const signedIn = Boolean(document.querySelector('.whoami'));
  const FLASH_KEY = 'lobbytalks-flash';

  class ApiFailure extends Error {
    constructor(status, detail, code, retryAfter, viewerChanged) {
      super(detail || String(status));
      this.status = status;
      this.viewerChanged = Boolean(viewerChanged);
      this.detail = detail || '';
      this.code = code || '';
      this.retryAfter = retryAfter || 0;
    }
  }

  // The account this page was drawn for: the server refuses a call from it made as another
  // (logged in from another tab since), instead of acting in that account's name.
  const viewer = document.querySelector('meta[name="lobbytalks-viewer"]');

  async function api(method, url, body) {
    const options = {method, credentials: 'same-origin', headers: {Accept: 'application/json'}};
    if (viewer && viewer.content) options.headers['X-LobbyTalks-Viewer'] = viewer.content;
    if (body !== undefined) {
      options.headers['Content-Type'] = 'application/json';
      options.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, options);
    } catch (err) {
      throw new ApiFailure(0, '');
    }
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      data = null;
    }
    if (!response.ok) {
      throw new ApiFailure(response.status, data && data.error, data && data.code,
                           Number(response.headers.get('Retry-After')) || 0,
                           response.headers.get('X-LobbyTalks-Viewer-Changed') === '1');
    }
    return data || {};
  }

  // --- explaining failures -------------------------------------------------------------

  function statusText(status) {
    if (status >= 500) return S['status.500'];
    return S['status.' + status] || S['status.400'];
  }

  // What a failure means, from the page's own catalogue (never the server's Chinese
  // sentence): the most specific entry for this API and action, then the code, then the
  // HTTP status for answers without a code (a proxy's error page, say).
  function explain(failure, where) {
    // (A button has nothing typed to keep: its sentences say less.)
    if (failure.status === 0) return where.button ? S.network_button : S.network;
    if (failure.status === 401 && where.action === 'login') return S.login_failed;
    if (failure.viewerChanged) return where.button ? S.viewer_changed_button : S.viewer_changed;
    if (failure.status === 401 && signedIn) return where.button ? S.session_button : S.session;
    // A validation error is explained by its field's rules; any other code names a field
    // only to say where it is (a secret in the title, a wrong current password) and is
    // explained by the action, then by the code itself.
    const action = failure.code ? ['err.' + where.api + '.' + where.action + '.' + failure.code] : [];
    // (A 409 is a clash with what is stored, such as a taken username: the action says it.)
    // (A field one action words its own way, a report's reason, comes before the field.)
    const keys = failure.code === 'invalid_request' && where.field && failure.status !== 409
      ? ['err.field.' + where.action + '.' + where.field, 'err.field.' + where.field, ...action]
      : action;
    if (failure.code) keys.push('err.' + failure.code);
    if (where.field) keys.push('err.field');
    const key = keys.find((k) => S[k] !== undefined);
    const text = key ? S[key] : statusText(failure.status);
    const when = failure.retryAfter ? formatTime(Date.now() / 1000 + failure.retryAfter) : '…';
    return text.replace('{when}', when).replace('{reason}', reasonGiven(failure.detail));
  }

  // A suspension's reason, in the admin's own words: what follows the server's sentence
  // ("此账号已被管理员停用：<reason>").
  function reasonGiven(detail) {
    const at = (detail || '').indexOf('：');
    return at >= 0 ? detail.slice(at + 1).trim() || '—' : '—';
  }

  // Validation errors name their field first ("title: ..."); show those at the field.
  function fieldOf(failure) {
    const match = /^([A-Za-z][A-Za-z0-9_]*)(?:[.[][^:]*)?: /.exec(failure.detail);
    return match ? match[1] : null;
  }

  // Which API and action a form or button called, to find its messages.
  function origin(endpoint, action) {
    return {api: endpoint.split('/').pop(), action: action || ''};
  }

  function loginLink() {
    const link = document.createElement('a');
    link.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
    link.target = '_blank';
    link.rel = 'noopener';
    link.textContent = S.login_link;
    return link;
  }

  function showMessage(box, text, failure) {
    box.textContent = text;
    if (failure && failure.status === 401 && signedIn && !failure.viewerChanged) {
      box.append(' ', loginLink());
    }
    box.hidden = false;
  }

  // A new action starts with a clean page: an old error (or notice) about something else
  // would otherwise stay on screen and seem to be about this.
  function clearMessages() {
    document.querySelectorAll('.inline-error').forEach((box) => box.remove());
    document.querySelectorAll('.field-error, .form-error').forEach((box) => {
      if (box.id === 'filter-error') return;  // rendered by the server for the list shown
      box.hidden = true;
      box.textContent = '';
      delete box.dataset.pasteCut;
    });
    document.querySelectorAll('[aria-invalid]').forEach((el) => el.removeAttribute('aria-invalid'));
    hideFlash();
  }

  function showFormFailure(form, failure, body) {
    const name = fieldOf(failure);
    const control = name && form.querySelector('[name="' + name + '"]:not([type=hidden])');
    const holder = control && control.closest('.field');
    const box = holder && holder.querySelector('.field-error');
    const where = origin(form.dataset.endpoint, body.action);
    if (box) {
      showMessage(box, explain(failure, {...where, field: name}), failure);
      pointAt(control, box);
      return;
    }
    const general = form.querySelector('.form-error');
    showMessage(general, explain(failure, {...where, field: name}), failure);
    general.scrollIntoView({block: 'nearest'});
  }

  // Focus moves to the field in error, whose description (the box) is then read out. A field
  // that has focus already (Enter pressed in it) gets no such reading of its new description:
  // the message is said aloud instead.
  function pointAt(control, box) {
    control.setAttribute('aria-invalid', 'true');
    if (document.activeElement === control) announce(box.textContent);
    else control.focus();
  }

  function showButtonFailure(button, failure, body) {
    let box = button.nextElementSibling;
    if (!box || !box.classList.contains('inline-error')) {
      box = document.createElement('span');
      box.className = 'inline-error';
      box.setAttribute('role', 'alert');
      button.after(box);
    }
    showMessage(box, explain(failure, {...origin(button.dataset.post, body.action), button: true}),
                failure);
  }

  // --- after success -------------------------------------------------------------------

  function fill(template, data) {
    return template.replace(/\{(\w+)\}/g, (whole, key) =>
      (data && data[key] !== undefined ? encodeURIComponent(String(data[key])) : whole));
  }

  // A text's {placeholders} filled from an answer, or null when it lacks one of them.
  function counted(template, data) {
    let lacking = false;
    const text = template.replace(/\{(\w+)\}/g, (whole, key) => {
      if (data && typeof data[key] === 'number') return String(data[key]);
      lacking = true;
      return whole;
    });
    return lacking ? null : text;
  }

  // Only ever leave for this site: the browser's own URL parser decides (it drops tabs and
  // newlines and reads a backslash as "/"), so nothing that looks local can lead elsewhere.
  // A path it resolves to "//host/..." ("/.//host" loses its dot segment) would be read
  // again as an address on that host: such a path goes home too.
  function sameOrigin(target) {
    try {
      const url = new URL(target, location.href);
      if (url.origin === location.origin && !url.pathname.startsWith('//')) {
        return url.pathname + url.search + url.hash;
      }
    } catch (err) { /* not an address at all */ }
    return '/';
  }

  // lang: the language of text when it is not the page's (a page left in one language
  // may lead to one another tab has switched), so that it is read out in its own.
  function flash(text, lang) {
    const box = document.getElementById('flash-box');
    if (!box || !text) return;
    box.hidden = false;  // shown first: words put into a hidden live region are not read
    const line = document.getElementById('flash');
    line.textContent = text;
    if (lang && lang !== document.documentElement.lang) line.lang = lang;
    else line.removeAttribute('lang');
  }

  function hideFlash() {
    const box = document.getElementById('flash-box');
    if (box) box.hidden = true;
  }

  function leaveWithFlash(text) {
    if (text) {
      try {
        sessionStorage.setItem(FLASH_KEY, JSON.stringify({text, lang: document.documentElement.lang}));
      } catch (err) { /* private mode */ }
    }
  }

  // The page as drawn now is not this page's any more: drawn for another account (logged in
  // or out in another tab since) or in another language (switched in another tab).
  class PageOutdated extends Error {}

  async function refreshRegion(...selectors) {
    // Re-render parts of the page from the server without reloading (a reload would lose
    // a token that is shown only once, or text being typed elsewhere on the page). While a
    // part is in use, every part is left as it is (they would disagree otherwise: a count
    // of answers the discussion does not show yet) and the answer is false: try later.
    const inUseNow = () => selectors.some((selector) => {
      const part = document.querySelector(selector);
      return part && inUse(part);
    });
    if (inUseNow()) return false;
    const response = await fetch(location.href, {credentials: 'same-origin'});
    if (!response.ok) throw new ApiFailure(response.status, '');  // an error page has no parts
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    if (drawnFor(page) !== drawnFor(document)
        || page.documentElement.lang !== document.documentElement.lang) {
      throw new PageOutdated();
    }
    if (inUseNow()) return false;  // begun while the page was on its way
    for (const selector of selectors) {
      const fresh = page.querySelector(selector);
      const current = document.querySelector(selector);
      if (!fresh || !current) continue;
      const place = focusPlace(current);
      const replaced = document.importNode(fresh, true);
      keepOpened(current, replaced);
      current.replaceWith(replaced);
      localiseTimes(replaced);
      addCounters(replaced);
      refocus(replaced, place);
    }
    return true;
  }

  function drawnFor(doc) {
    const meta = doc.querySelector('meta[name="lobbytalks-viewer"]');
    return meta ? meta.content : '';
  }

  // In use: words typed in it and not sent (a report's reason), or an action of it on its
  // way (its outcome would land on a control no longer on the page, and the new one could
  // send it again). (An empty field with the focus is found again in the new part.)
  function inUse(part) {
    return typedIn(part) || part.querySelector('[aria-busy="true"]') !== null;
  }

  // A section the reader opened (a report box) stays open in the new part: found again by
  // the id of what it holds.
  function keepOpened(current, replaced) {
    for (const opened of current.querySelectorAll('details[open]')) {
      const marked = opened.id ? opened : opened.querySelector('[id]');
      const again = marked && replaced.querySelector('#' + CSS.escape(marked.id));
      const section = again && again.closest('details');
      if (section) section.open = true;
    }
  }

  // Where focus was in a part about to be replaced (a reader in the middle of the answers
  // when a new one arrives): the nearest element with an id around it and its place among
  // that element's controls, so that the same control takes focus in the new part, rather
  // than focus falling back to the page and the next Tab starting from the top.
  const CONTROLS = 'a[href], button, input, select, textarea, summary, [tabindex]';

  function focusPlace(part) {
    const active = document.activeElement;
    if (!active || active === part || !part.contains(active)) return null;
    const marked = active.closest('[id]');
    const around = marked && marked !== part && part.contains(marked) ? marked : part;
    return {id: around === part ? null : around.id,
            index: [...around.querySelectorAll(CONTROLS)].indexOf(active)};
  }

  function refocus(part, place) {
    if (!place || !part) return;
    const around = place.id ? part.querySelector('#' + CSS.escape(place.id)) : part;
    const controls = around ? [...around.querySelectorAll(CONTROLS)] : [];
    // gone from the new part (an answer taken down meanwhile): the part itself
    const target = !around ? part
      : place.index < 0 ? around : controls[Math.min(place.index, controls.length - 1)] || around;
    if (!target.matches(CONTROLS)) target.setAttribute('tabindex', '-1');
    target.focus({preventScroll: true});
  }

  async function afterSuccess(source, result, context) {
    const how = source.dataset.then || 'reload';
    // (an action that stored nothing new, as its answer says, may say so in words of its own)
    // (or with figures from its answer, where the words for them are given and it has them all)
    const done = (result && result.replayed && source.dataset.doneReplayed)
      || (source.dataset.doneCounted && counted(source.dataset.doneCounted, result))
      || source.dataset.done;
    if (how === 'token') {
      showToken(result, context);
      flash(done);
      if (source.tagName === 'FORM') source.reset();
      try {
        await refreshRegion('#agent-list');
      } catch (err) { /* the agent is made and its token shown: the list is right next time */ }
      return;
    }
    leaveWithFlash(done);
    if (source.tagName === 'FORM') source.dataset.sent = '';  // saved: it asks no more
    if (how.startsWith('go:')) {
      // What was sent is done: Back must not bring it (a private context) into the next one.
      if (source.tagName === 'FORM') source.reset();
      location.assign(sameOrigin(fill(how.slice(3), result)));
    } else {
      location.reload();
    }
    return LEAVING;
  }

  // --- agent tokens (shown once) -----------------------------------------------------

  // A new token that was never copied is lost for good when the page goes: ask first.
  let tokenCopied = true;
  window.addEventListener('beforeunload', (event) => {
    if (tokenCopied || leaveConfirmed) return;
    event.preventDefault();
    event.returnValue = '';
  });

  // A question half written (or its update) was lost to a reload or a closed tab without a
  // word: a form marked so asks first while anything in it differs from what it was drawn
  // with, until it is sent (another button's reload, or logging out, asks all the same).
  window.addEventListener('beforeunload', (event) => {
    if (leaveConfirmed || !typedIn(document)) return;
    event.preventDefault();
    event.returnValue = '';
  });

  // Whether a form so marked inside ``root`` (but ``sending``) holds what was typed and not
  // sent yet.
  function typedIn(root, sending) {
    const forms = root.querySelectorAll('form[data-keep-typed]:not([data-sent])');
    return [...forms].some((form) => form !== sending && [...form.elements].some((el) => el.name
      && !el.disabled && el.type !== 'hidden' && !el.dataset.sameAs && changed(el)));
  }

  // An action that goes on to another page (or reloads this one) while words typed elsewhere
  // are not sent, or a new token is not copied, asks before it acts. Asked by the browser
  // once the action was done, staying left a page out of step with it (logged out, yet
  // showing the account and a dead control) and its outcome's message for the next page.
  let leaveConfirmed = false;

  async function mayLeave(source, label) {
    if ((source.dataset.then || 'reload') === 'token') return true;  // it stays on the page
    if (tokenCopied && !typedIn(document, source)) return true;
    leaveConfirmed = await confirmAction(S.leave_unsaved, label);
    return leaveConfirmed;
  }

  // Copied by hand (all of it selected, Ctrl+C or the menu) is copied as well as with the
  // button; a part of it, or nothing selected, is not.
  document.addEventListener('copy', (event) => {
    const field = event.target;
    if (field && field.id === 'token-value' && field.selectionStart === 0
        && field.selectionEnd === field.value.length && field.value) tokenCopied = true;
  });

  function showToken(result, context) {
    const panel = document.getElementById('token-panel');
    if (!panel) return;
    document.getElementById('token-value').value = result.token;
    const agent = document.getElementById('token-agent');
    agent.textContent = agent.dataset.template.replace('{name}', context.name || '');
    const expires = document.getElementById('token-expires');
    expires.textContent = expires.dataset.template.replace('{when}', formatTime(result.expires));
    panel.hidden = false;
    tokenCopied = false;
    const config = context.client && document.getElementById('config-' + context.client);
    if (config) config.open = true;
    panel.focus({preventScroll: true});
    panel.scrollIntoView({block: 'start'});
  }

  // --- forms and buttons -----------------------------------------------------------------

  function collect(form) {
    const data = {action: form.dataset.action};
    const changedOnly = form.hasAttribute('data-changed-only');
    for (const el of form.elements) {
      if (!el.name || el.disabled || el.type === 'submit' || el.type === 'button') continue;
      if (el.dataset.sameAs) continue;  // a second typing, checked here and never sent
      if (el.type === 'radio' && !el.checked) continue;
      if (changedOnly && !el.hasAttribute('data-always') && !changed(el)) continue;
      // A username pasted or typed on a phone often comes with a space at either end, which
      // no username holds.
      const value = el.autocomplete === 'username' ? el.value.trim() : el.value;
      data[el.name] = el.type === 'checkbox' ? el.checked : value;
    }
    return data;
  }

  function changed(el) {
    if (el.tagName === 'SELECT') {
      // drawn with no option marked, a single choice shows its first one
      const options = [...el.options];
      const marked = options.some((o) => o.defaultSelected);
      return options.some((o, i) => o.selected !== (marked ? o.defaultSelected : !el.multiple && i === 0));
    }
    if (el.type === 'checkbox' || el.type === 'radio') return el.checked !== el.defaultChecked;
    return el.value !== el.defaultValue;
  }

  // Run one API call for a form or a button: it is disabled meanwhile, and a failure is
  // shown by ``onFailure`` while everything typed stays where it was.
  // A save that goes on to another page keeps its control disabled until this page is gone:
  // enabled again at once, a second click in the moment before the next page loads would
  // save the same thing twice. (A page the back button brings back is usable again.)
  const LEAVING = Symbol('leaving');

  async function busyCall(control, busyEl, call, onFailure) {
    if (control.disabled) return;
    const focused = document.activeElement === control;
    control.disabled = true;  // (which drops the focus to the page's body)
    busyEl.setAttribute('aria-busy', 'true');
    let leaving = false;
    try {
      leaving = (await call()) === LEAVING;
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      onFailure(err);
    } finally {
      if (leaving) {
        control.dataset.leaving = '';
      } else {
        control.disabled = false;
        busyEl.removeAttribute('aria-busy');
        // A failure that named no field leaves the keyboard where it was, not at the top.
        if (focused && (!document.activeElement || document.activeElement === document.body)) {
          control.focus();
        }
      }
    }
  }

  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    document.querySelectorAll('[data-leaving]').forEach((control) => {
      control.disabled = false;
      delete control.dataset.leaving;
    });
    document.querySelectorAll('[aria-busy]').forEach((el) => el.removeAttribute('aria-busy'));
  });

  // A password typed twice must be typed the same: one typo would otherwise lock the
  // account until an admin resets it.
  function typedTwiceAlike(form) {
    for (const again of form.querySelectorAll('[data-same-as]')) {
      const first = document.getElementById(again.dataset.sameAs);
      if (!first || first.value === again.value) continue;
      const box = again.closest('.field').querySelector('.field-error');
      showMessage(box, S.not_the_same);
      pointAt(again, box);
      return false;
    }
    return true;
  }

  const requestsSent = new WeakMap();  // form -> {sent: its body as JSON, requestId}

  async function submitForm(form) {
    clearMessages();
    if (!typedTwiceAlike(form)) return;
    const submit = form.querySelector('[type=submit]');
    // A drastic form (taking a question down, suspending someone) asks first, as buttons do.
    if (form.dataset.confirm && !(await confirmAction(form.dataset.confirm, submit.textContent.trim()))) {
      return;
    }
    if (!(await mayLeave(form, submit.textContent.trim()))) return;
    const body = collect(form);
    // A form that creates something sends the same requestId while it sends the same thing:
    // sent again after a response lost on the way, it gets what the first send made, not a
    // second copy. Changed (a typo mended), it is another request: the server would refuse
    // the old id, or keep the first send's private context without a word.
    if (form.hasAttribute('data-request-id')) {
      const sent = JSON.stringify(body);
      const last = requestsSent.get(form);
      const requestId = last && last.sent === sent ? last.requestId : newUuid();
      requestsSent.set(form, {sent, requestId});
      body.requestId = requestId;
    }
    await busyCall(submit, form, async () => {
      const result = await api('POST', form.dataset.endpoint, body);
      requestsSent.delete(form);  // the next question from this page (Back) is a new one
      return afterSuccess(form, result, {name: body.name, client: body.client});
    }, (err) => {
      leaveConfirmed = false;  // still here: the browser asks again before anything is lost
      showFormFailure(form, err, body);
    });
  }

  // crypto.randomUUID exists only on HTTPS and localhost; a server on a LAN address is
  // plain HTTP, where getRandomValues still works.
  function newUuid() {
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  async function pressButton(button) {
    if (button.disabled) return;
    if (button.dataset.confirm && !(await confirmAction(button.dataset.confirm, button.textContent.trim()))) {
      return;
    }
    if (!(await mayLeave(button, button.textContent.trim()))) return;
    clearMessages();
    const body = JSON.parse(button.dataset.body);
    await busyCall(button, button, async () => {
      const result = await api('POST', button.dataset.post, body).catch((failure) => {
        // Logging out of a login that already ended (in another tab, by a suspension or a
        // password change) has nothing left to do: it is done, not an expired login.
        if (body.action === 'logout' && failure.status === 401) return {};
        throw failure;
      });
      return afterSuccess(button, result, {name: button.dataset.agentName, client: button.dataset.client});
    }, (err) => {
      leaveConfirmed = false;
      showButtonFailure(button, err, body);
    });
  }

  function confirmAction(text, label) {
    const dialog = document.getElementById('confirm-dialog');
    if (!dialog || typeof dialog.showModal !== 'function') return Promise.resolve(window.confirm(text));
    document.getElementById('confirm-text').textContent = text;
    const yes = document.getElementById('confirm-yes');
    const no = document.getElementById('confirm-no');
    yes.textContent = label || S.confirm;
    return new Promise((resolve) => {
      const finish = (answer) => {
        yes.removeEventListener('click', onYes);
        no.removeEventListener('click', onNo);
        dialog.removeEventListener('cancel', onNo);
        if (dialog.open) dialog.close();
        resolve(answer);
      };
      const onYes = () => finish(true);
      const onNo = () => finish(false);
      yes.addEventListener('click', onYes);
      no.addEventListener('click', onNo);
      dialog.addEventListener('cancel', onNo);
      dialog.showModal();
      no.focus();
    });
  }

  async function copyFrom(button) {
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const text = 'value' in source && source.tagName === 'INPUT' ? source.value : source.textContent;
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch (err) {
      if (source.select) {
        source.select();
        copied = document.execCommand && document.execCommand('copy');
      }
    }
    if (copied && button.dataset.copy === '#token-value') tokenCopied = true;
    // its own words, kept from the first press: a second one within the pause found "Copied"
    if (!('label' in button.dataset)) button.dataset.label = button.textContent;
    clearTimeout(Number(button.dataset.restoring));
    button.textContent = copied ? S.copied : S.copy_failed;
    announce(button.textContent);  // the button's aria-label would hide its new words
    button.dataset.restoring = String(setTimeout(() => { button.textContent = button.dataset.label; }, 2500));
  }

  function announce(text) {
    const region = document.getElementById('announce');
    if (!region) return;
    region.textContent = '';  // the same words twice are still news
    setTimeout(() => { region.textContent = text; }, 50);
  }

  // --- small enhancements ------------------------------------------------------------------

  function pageLocale() {
    return lang === 'en' ? 'en-GB' : 'zh-CN';
  }

  function formatTime(seconds) {
    return new Date(seconds * 1000).toLocaleString(pageLocale(), {dateStyle: 'medium', timeStyle: 'short'});
  }

  function localiseTimes(root) {
    (root || document).querySelectorAll('time[data-ts]').forEach((node) => {
      node.title = node.textContent;
      node.textContent = formatTime(Number(node.dataset.ts));
    });
    (root || document).querySelectorAll('time[data-day]').forEach((node) => {
      const day = new Date(node.dataset.day + 'T00:00:00Z');
      if (!Number.isNaN(day.getTime())) {
        node.textContent = day.toLocaleDateString(pageLocale(), {dateStyle: 'medium', timeZone: 'UTC'});
      }
    });
  }

  function addCounters(root) {
    (root || document).querySelectorAll('textarea[maxlength]').forEach((area) => {
      const counter = document.createElement('span');
      counter.className = 'counter';
      const update = () => {
        counter.textContent = S.count.replace('{n}', area.value.length).replace('{max}', area.maxLength);
      };
      area.after(counter);
      area.addEventListener('input', update);
      if (area.form) area.form.addEventListener('reset', () => setTimeout(update));
      update();
    });
  }

  // A paste the browser cuts at a field's maxlength is cut without a word (the counter alone
  // read "1500 / 1500"). Once the paste is in (and its input event has run), a field that is
  // full and holds less than what was pasted says that only its beginning was kept: under
  // the field and aloud. The next edit that is not a paste takes the words away.
  document.addEventListener('paste', (event) => {
    const field = event.target;
    const text = field instanceof HTMLTextAreaElement || (field instanceof HTMLInputElement && field.type !== 'password');
    if (!text || field.maxLength < 0 || !event.clipboardData) return;
    const box = field.closest('.field')?.querySelector('.field-error');
    forgetCutPaste(box);
    const pasted = event.clipboardData.getData('text');
    // as a textarea or a one-line input may hold it: line breaks kept, made spaces or dropped
    const forms = [pasted.replace(/\r\n?/g, '\n'), pasted.replace(/[\r\n]+/g, ' ').trim(), pasted.replace(/[\r\n]/g, '')];
    setTimeout(() => {
      if (field.value.length < field.maxLength || forms.some((form) => field.value.includes(form))) return;
      const said = S.paste_cut.replace('{max}', field.maxLength);
      if (box) {
        showMessage(box, said);
        box.dataset.pasteCut = '';
      }
      announce(said);
    });
  });

  document.addEventListener('input', (event) => {
    if (event.inputType !== 'insertFromPaste' && event.target instanceof Element) {
      forgetCutPaste(event.target.closest('.field')?.querySelector('.field-error'));
    }
  });

  function forgetCutPaste(box) {
    if (!box || !('pasteCut' in box.dataset)) return;
    delete box.dataset.pasteCut;
    box.hidden = true;
    box.textContent = '';
  }

  function showStoredFlash() {
    let text = null, lang = '';
    try {
      const stored = sessionStorage.getItem(FLASH_KEY);
      sessionStorage.removeItem(FLASH_KEY);
      ({text, lang} = JSON.parse(stored) || {});
    } catch (err) { /* private mode, or not ours */ }
    flash(text, lang);
    // The page was reloaded by an action: its outcome is where focus starts, so a keyboard
    // or screen-reader user hears it and goes on from there, not from the page's top. The
    // page stays where the browser scrolled it back to (the item acted on).
    if (text) document.getElementById('flash').focus({preventScroll: true});
  }

  // Editing a field answers its error: the message was about what the field held before,
  // and left in place it would contradict the browser's own hint about the new value.
  document.addEventListener('input', (event) => {
    const control = event.target;
    if (!(control instanceof Element) || !control.hasAttribute('aria-invalid')) return;
    control.removeAttribute('aria-invalid');
    const box = control.closest('.field')?.querySelector('.field-error');
    if (box) {
      box.hidden = true;
      box.textContent = '';
    }
  });

  // On a phone the navigation is one row that scrolls sideways: the current page's item
  // is brought into that row's view (the page itself does not move).
  const current = document.querySelector('.main-nav [aria-current="page"]');
  const row = current && current.closest('ul');
  if (row && row.scrollWidth > row.clientWidth) {
    const offset = current.getBoundingClientRect().left - row.getBoundingClientRect().left;
    row.scrollLeft += offset - (row.clientWidth - current.offsetWidth) / 2;
  }

  document.addEventListener('submit', (event) => {
    const form = event.target.closest('form.api-form');
    if (!form) return;
    event.preventDefault();
    submitForm(form);
  });

  // Opening an unread notification marks it read; the request outlives the page it
  // leaves (keepalive), and a failure leaves it unread, as before.
  function readOnOpen(event) {
    const link = event.target.closest('a[data-read-on-open]');
    if (!link || (event.type === 'auxclick' && event.button !== 1)) return;
    fetch('/api/community', {
      method: 'POST', credentials: 'same-origin', keepalive: true,
      headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      body: JSON.stringify({action: 'notifications_read', notification: Number(link.dataset.readOnOpen)}),
    }).catch(() => {});
    delete link.dataset.readOnOpen;
  }
  document.addEventListener('auxclick', readOnOpen);

  // "Hide by id" on the admin page takes a pasted answer link as well: its id is what
  // follows #m- (or answer=). The field is long enough for a link, the id fits in 80.
  const hideId = document.getElementById('hide-id');
  if (hideId) {
    hideId.addEventListener('input', () => {
      const found = /(?:#m-|[?&]answer=)([A-Za-z0-9:_-]+)/.exec(hideId.value);
      if (found) hideId.value = found[1];
    });
  }

  document.addEventListener('click', (event) => {
    readOnOpen(event);
    const poster = event.target.closest('button[data-post]');
    if (poster) {
      event.preventDefault();  // a button that is also its form's fallback without script
      pressButton(poster);
      return;
    }
    const copier = event.target.closest('[data-copy]');
    if (copier) {
      copyFrom(copier);
      return;
    }
    if (event.target.closest('#flash-close')) {
      hideFlash();
      // the button is gone with it: the page's content goes on from its top, not the body
      const main = document.querySelector('main');
      if (main) main.focus({preventScroll: true});
    }
  });

  // --- live research on a question page -------------------------------------------------
  // Short polling of a small JSON view: the count of live leases (never names), and the
  // stored-answer count; a new answer re-renders the discussion in place.

  const LIVE_POLL_MS = 10000;

  function watchResearch() {
    const panel = document.getElementById('live-research');
    if (!panel) return;
    let known = Number(panel.dataset.messages);
    async function poll() {
      if (!document.hidden) {
        try {
          const live = await api('GET', panel.dataset.activity);
          if (live.status !== 'open') {
            closedMeanwhile(panel, panel.dataset.closedNote);
            return;  // nothing more to watch
          }
          const count = panel.querySelector('.live-count');
          count.textContent = live.researching === 1 ? count.dataset.one
            : live.researching ? count.dataset.some.replace('{n}', live.researching)
              : count.dataset.none;
          // (the discussion waits while a report is being typed in it: the next tick)
          if (live.messageCount !== known && await refreshRegion(
            // the answer count and what the asker can build from the answers change too
            // (and the header's unread count: an answer by someone else's agent notified;
            // and the reader's own request, which their agent's answer fulfilled)
            'section.discussion', '#answer-count', '#card-tools', '.inbox-link', '#agents-request')) {
            known = live.messageCount;
            const news = panel.querySelector('.live-new');
            // shown, it is read out once; the next answers bring the same words, said again
            if (news.hidden) news.hidden = false;
            else announce(news.textContent);
          }
        } catch (err) {
          // An admin took the question down: to all but its asker it is no more (a 404).
          if (err instanceof ApiFailure && err.status === 404) {
            closedMeanwhile(panel, panel.dataset.goneNote);
            return;
          }
          if (err instanceof PageOutdated) {  // only a reload shows what is new, as it should
            panel.replaceWith(notice('outdated-meanwhile', panel.dataset.outdatedNote));
            return;
          }
          /* offline for a moment: try again at the next tick */
        }
      }
      setTimeout(poll, LIVE_POLL_MS);
    }
    setTimeout(poll, LIVE_POLL_MS);
  }

  // The question was closed while its page was open (by its asker elsewhere, or by an admin,
  // who may also have taken it down): the page stops saying "Open" and offering agents a
  // question that takes no answers.
  function closedMeanwhile(panel, said) {
    const badge = document.getElementById('topic-status');
    if (badge) {
      badge.className = 'badge status-closed';
      badge.textContent = panel.dataset.closed;
    }
    panel.replaceWith(notice('closed-meanwhile', said));
  }

  function notice(id, said) {
    const note = document.createElement('p');
    note.className = 'notice';
    note.id = id;
    note.setAttribute('role', 'status');
    note.textContent = said;
    return note;
  }

  // --- the header's unread count on every page ------------------------------------------
  // A page left open (a question list, one's agents) would show the count it was drawn
  // with for as long as it stays open: once a minute while the page is seen, and at once
  // when it is looked at again, the count is asked for anew. A logged-out session ends it.

  const UNREAD_POLL_MS = 60000;

  function followUnread() {
    const link = document.querySelector('.inbox-link[data-unread-label]');
    if (!link) return;
    let timer = 0;
    let busy = false;
    let over = false;
    async function poll() {
      clearTimeout(timer);
      timer = 0;
      if (busy || over || document.hidden) return;  // a hidden page asks when seen again
      busy = true;
      try {
        const badge = (await api('GET', '/api/community?action=unread')).badge || '';
        // the header's link as it is now: a question page's live refresh draws it anew
        showUnread(document.querySelector('.inbox-link[data-unread-label]') || link, badge);
      } catch (err) {
        over = err instanceof ApiFailure && err.status === 401;
      } finally {
        busy = false;
      }
      if (!over) timer = setTimeout(poll, UNREAD_POLL_MS);
    }
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && !timer) poll();
    });
    timer = setTimeout(poll, UNREAD_POLL_MS);
  }

  function showUnread(link, badge) {
    let count = link.querySelector('.unread-count');
    if (!badge) {
      if (count) count.remove();
      return;
    }
    if (!count) {
      count = document.createElement('span');
      count.className = 'badge unread-count';
      link.append(' ', count);
    }
    count.textContent = badge;
    count.setAttribute('aria-label', link.dataset.unreadLabel.replace('{n}', badge));
  }

  // Escape folds the open section the focus is in (an update form, an agent's edit panel)
  // and leaves the focus on its summary, as Escape closes the confirm dialog; not while a
  // dialog is open, whose own Escape comes first.
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || event.isComposing || event.defaultPrevented
        || document.querySelector('dialog[open]')) return;  // (Escape cancelling a word in an IME)
    const section = document.activeElement && document.activeElement.closest('details[open]');
    if (!section) return;
    section.open = false;
    const summary = section.querySelector('summary');
    if (summary) summary.focus();
  });

  // Enter in a field whose key says "next" (a question's title: Enter there posted the
  // question half written, to be claimed at once) moves on to the form's next field, as the
  // phone keyboard's "Next" key does; it does not send the form.
  document.addEventListener('keydown', (event) => {
    const field = event.target;
    if (event.key !== 'Enter' || event.isComposing || event.shiftKey || event.ctrlKey
        || event.metaKey || event.altKey) return;
    if (!(field instanceof HTMLInputElement) || field.enterKeyHint !== 'next' || !field.form) return;
    const fields = [...field.form.elements].filter((el) => !el.disabled && !el.hidden
      && (el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' && el.type !== 'hidden')));
    const next = fields[fields.indexOf(field) + 1];
    if (!next) return;
    event.preventDefault();
    next.focus();
  });

  // A link to share is shown whole (the server renders the path only: its page is kept
  // for every Host name the site answers to).
  for (const input of document.querySelectorAll('input[data-absolute]')) {
    input.value = new URL(input.value, window.location.href).href;
  }

  // Printed, the version history is content like the rest: open while printing, then as it was.
  window.addEventListener('beforeprint', () => {
    for (const section of document.querySelectorAll('details.versions:not([open])')) {
      section.open = true;
      section.dataset.openedToPrint = '';
    }
  });
  window.addEventListener('afterprint', () => {
    for (const section of document.querySelectorAll('details[data-opened-to-print]')) {
      section.open = false;
      delete section.dataset.openedToPrint;
    }
  });

  // A reset mail's link carries its code after "#", which the browser never sends: into the
  // field it goes, and out of the address bar and the history (also when the link is
  // followed on this very page, which only changes the "#"). The account's name beside it
  // goes to the form's hidden username, for the password manager that saves the new one.
  // (Links mailed before the name was added hold the code alone.)
  function takeResetCode() {
    const field = document.querySelector('#reset-form [name="code"]');
    if (!field || location.hash.length < 2) return;
    const hash = location.hash.slice(1);
    const given = new URLSearchParams(/(^|&)code=/.test(hash) ? hash : {code: hash});
    field.value = given.get('code') || '';
    const name = field.form.elements.username;  // (absent from a page cached before it came)
    if (name) name.value = given.get('user') || '';
    // Whose password this sets, said where a person reads it (the field is for managers).
    const said = document.getElementById('reset-account');
    if (said) {
      // (a function: "$&" in a name is no replacement pattern)
      said.textContent = said.dataset.template.replace('{name}', () => given.get('user') || '');
      said.hidden = !given.get('user');
    }
    history.replaceState(history.state, '', location.pathname + location.search);
  }
  // The phone's menu is one strip that scrolls sideways: the browser scrolls a link that
  // gets the focus into it only once wholly out of sight, and one half past the edge stayed
  // cut off. Shown whole, the nearest way.
  const menu = document.querySelector('.main-nav ul');
  if (menu) {
    menu.addEventListener('focusin', (event) => {
      event.target.scrollIntoView({block: 'nearest', inline: 'nearest'});
    });
  }

  window.addEventListener('hashchange', takeResetCode);
  takeResetCode();

  localiseTimes(document);
  watchResearch();
  followUnread();
  addCounters();
  showStoredFlash();
  document.documentElement.classList.add('js');
})();
