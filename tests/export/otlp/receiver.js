#!/usr/bin/env node
// An OTLP/HTTP receiver for hark's OTLP exporter test (tests/test_export_otlp_node.c),
// decoding every request with OpenTelemetry's own codec
// (@opentelemetry/otlp-transformer's generated protobuf root), protobuf and JSON
// bodies alike, gzip or not.
//
// Prints "PORT <n>" once listening on 127.0.0.1. Endpoints:
//   POST /v1/traces, /v1/metrics, /v1/logs   OTLP/HTTP; answers 200 with an empty
//                                            Export*ServiceResponse
//   POST /control  {"status":503,"times":1,"retry_after":"1"}: the next `times`
//                  OTLP requests get that status (and Retry-After)
//   POST /check    the test's expectations (JSON); answers 200 "ok" or 422 with
//                  one line per mismatch, then forgets what it received
//   POST /received what was received so far, decoded, as JSON -- {spans, logs,
//                  metrics, resources, requests}, attributes as {key: {type, value}}
//                  -- then forgets it (for tests that compare in their own language)
//   POST /seen     what arrived so far, kept: one line per span, "span", its name
//                  and its resource's process.pid, tab-separated
//   POST /quit     closes the server and exits
//
// With --tree (examples/otlp_demo.sh) it also prints every trace as a tree of spans,
// on standard error, each line prefixed "[otlp] ", as soon as the request bringing
// its root span is decoded and before answering it: so a sender that flushes after
// each request sees the tree printed before its flush returns. It never forgets
// what it received.
//
// With --tls-cert FILE --tls-key FILE it serves HTTPS instead (node's https server,
// OpenSSL); with --tls-client-ca FILE too it requires a client certificate signed by
// that CA, refusing the handshake of a client without one.
'use strict';

const fs = require('fs');
const http = require('http');
const https = require('https');
const zlib = require('zlib');
const path = require('path');

const root = require(path.join(__dirname, 'node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js'));
const pb = root.opentelemetry.proto;
const Req = {
  '/v1/traces': pb.collector.trace.v1.ExportTraceServiceRequest,
  '/v1/metrics': pb.collector.metrics.v1.ExportMetricsServiceRequest,
  '/v1/logs': pb.collector.logs.v1.ExportLogsServiceRequest,
};
const Resp = {
  '/v1/traces': pb.collector.trace.v1.ExportTraceServiceResponse,
  '/v1/metrics': pb.collector.metrics.v1.ExportMetricsServiceResponse,
  '/v1/logs': pb.collector.logs.v1.ExportLogsServiceResponse,
};

const TREE = process.argv.includes('--tree');
function arg(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}
let received = freshState();
const printed = new Set();

function describe(v) {
  if (v.type === 'string') return JSON.stringify(v.value.length > 60 ? v.value.slice(0, 57) + '...' : v.value);
  if (v.type === 'kvlist') return '{' + Object.entries(v.value).map(([k, x]) => `${k}=${describe(x)}`).join(' ') + '}';
  return String(v.value);
}

// Prints the traces whose root has arrived, each span indented under its parent;
// an attribute left out for size is said, as the span's droppedAttributesCount.
function printTrees() {
  const byTrace = new Map();
  for (const s of received.spans) {
    if (!byTrace.has(s.traceId)) byTrace.set(s.traceId, []);
    byTrace.get(s.traceId).push(s);
  }
  for (const [trace, spans] of byTrace) {
    if (printed.has(trace)) continue;
    const ids = new Set(spans.map((s) => s.spanId));
    const roots = spans.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
    if (!roots.some((s) => !s.parentSpanId || s.kind === 2)) continue;
    printed.add(trace);
    // Each process's spans name it (the resource's process.pid): forked workers tell apart.
    const pid = roots[0]._pid;
    const lines = [`trace ${trace}${pid ? `  process.pid=${pid}` : ''}`];
    const walk = (s, depth) => {
      const ms = Number(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1e6;
      const a = Object.entries(attrs(s.attributes)).map(([k, v]) => `${k}=${describe(v)}`).join(' ');
      const err = s.status && s.status.code === 2 ? `  ERROR ${s.status.message}` : '';
      const n = s.droppedAttributesCount || 0;
      const dropped = n ? `  (${n} attribute${n === 1 ? '' : 's'} left out: over span_bytes)` : '';
      lines.push(`${'  '.repeat(depth + 1)}${s.name}  ${ms.toFixed(3)} ms  ${a}${err}${dropped}`);
      spans.filter((c) => c.parentSpanId === s.spanId)
        .sort((x, y) => (BigInt(x.startTimeUnixNano) < BigInt(y.startTimeUnixNano) ? -1 : 1))
        .forEach((c) => walk(c, depth + 1));
    };
    roots.forEach((r) => walk(r, 0));
    // One synchronous write (stderr is, for a file, a terminal or a pipe), whole lines.
    process.stderr.write(lines.map((l) => `[otlp] ${l}`).join('\n') + '\n');
  }
}
let failNext = null; // {status, times, retry_after}

function freshState() {
  return { spans: [], metrics: [], logs: [], requests: [], resources: [], failures: [] };
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

// OTLP/JSON carries ids as hex; protobufjs' fromObject wants bytes as base64.
function jsonToCodec(v) {
  if (Array.isArray(v)) return v.map(jsonToCodec);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      if (ID_FIELDS.has(k) && typeof x === 'string') {
        if (!/^[0-9a-f]*$/.test(x)) throw new Error(`${k} ${x} is not lowercase hex`);
        o[k] = Buffer.from(x, 'hex').toString('base64');
      } else {
        o[k] = jsonToCodec(x);
      }
    }
    return o;
  }
  return v;
}

// The decoded message as plain objects: 64-bit integers as strings, ids as hex.
function plain(Type, msg) {
  const o = Type.toObject(msg, { longs: String, enums: Number, bytes: String, defaults: false });
  return (function fix(v) {
    if (Array.isArray(v)) return v.map(fix);
    if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        if (ID_FIELDS.has(k) && typeof v[k] === 'string') v[k] = Buffer.from(v[k], 'base64').toString('hex');
        else v[k] = fix(v[k]);
      }
    }
    return v;
  })(o);
}

function anyValue(v) {
  if (!v) return { type: 'empty' };
  if ('stringValue' in v) return { type: 'string', value: v.stringValue };
  if ('boolValue' in v) return { type: 'bool', value: v.boolValue };
  if ('intValue' in v) return { type: 'int', value: String(v.intValue) };
  if ('doubleValue' in v) return { type: 'double', value: v.doubleValue };
  if ('arrayValue' in v) return { type: 'array', value: ((v.arrayValue && v.arrayValue.values) || []).map(anyValue) };
  if ('kvlistValue' in v) {
    const o = {};
    for (const kv of v.kvlistValue.values || []) o[kv.key] = anyValue(kv.value);
    return { type: 'kvlist', value: o };
  }
  return { type: 'empty' };
}

function attrs(list) {
  const o = {};
  for (const kv of list || []) o[kv.key] = anyValue(kv.value);
  return o;
}

function record(url, obj, meta) {
  received.requests.push(meta);
  const top = obj.resourceSpans || obj.resourceMetrics || obj.resourceLogs || [];
  for (const r of top) {
    const res = attrs(r.resource && r.resource.attributes);
    received.resources.push(res);
    const pid = res['process.pid'] ? res['process.pid'].value : '';
    for (const s of r.scopeSpans || []) for (const sp of s.spans || []) received.spans.push({ ...sp, _meta: meta, _scope: s.scope, _pid: pid });
    for (const s of r.scopeMetrics || []) for (const m of s.metrics || []) received.metrics.push({ ...m, _meta: meta });
    for (const s of r.scopeLogs || []) for (const l of s.logRecords || []) received.logs.push({ ...l, _meta: meta });
  }
}

function handleOtlp(req, body, res) {
  const url = req.url;
  const meta = {
    url,
    contentType: req.headers['content-type'] || '',
    encoding: req.headers['content-encoding'] || '',
    header: req.headers['x-hark-test'] || '',
    time: Date.now(),
  };
  if (failNext && failNext.times > 0) {
    failNext.times--;
    received.failures.push({ ...meta, status: failNext.status });
    const h = { 'Content-Type': 'text/plain' };
    if (failNext.retry_after !== undefined) h['Retry-After'] = failNext.retry_after;
    res.writeHead(failNext.status, h);
    res.end('try later');
    return;
  }
  try {
    if (meta.encoding === 'gzip') body = zlib.gunzipSync(body);
    const Type = Req[url];
    let msg;
    if (meta.contentType === 'application/x-protobuf') {
      msg = Type.decode(body);
    } else if (meta.contentType === 'application/json') {
      // OTLP/JSON's 64-bit integers may be strings, which fromObject converts.
      msg = Type.fromObject(jsonToCodec(JSON.parse(body.toString('utf8'))));
      const err = Type.verify(msg);
      if (err) throw new Error('JSON does not verify: ' + err);
    } else {
      throw new Error('unexpected content type ' + meta.contentType);
    }
    record(url, plain(Type, msg), meta);
    if (TREE && url === '/v1/traces') printTrees();
    if (meta.contentType === 'application/json') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    } else {
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
      res.end(Buffer.from(Resp[url].encode(Resp[url].create({})).finish()));
    }
  } catch (e) {
    received.requests.push({ ...meta, error: String(e) });
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end(String(e));
  }
}

// ---- the checks --------------------------------------------------------------------

function check(exp) {
  const errs = [];
  const fail = (m) => errs.push(m);
  for (const r of received.requests) if (r.error) fail(`request ${r.url} failed to decode: ${r.error}`);
  const wantType = exp.json ? 'application/json' : 'application/x-protobuf';
  for (const r of received.requests) {
    if (r.contentType !== wantType) fail(`${r.url}: content type ${r.contentType}, expected ${wantType}`);
    if (r.encoding !== (exp.gzip ? 'gzip' : '')) fail(`${r.url}: content encoding "${r.encoding}", expected ${exp.gzip ? 'gzip' : 'none'}`);
    if (exp.header && r.header !== exp.header) fail(`${r.url}: x-hark-test header "${r.header}", expected "${exp.header}"`);
  }
  for (const res of received.resources) {
    for (const [k, v] of Object.entries(exp.resource || {})) {
      if (!res[k] || res[k].value !== v) fail(`resource ${k}: ${JSON.stringify(res[k])}, expected ${v}`);
    }
  }
  for (const [url, want] of Object.entries(exp.header_by_url || {})) {
    const rs = received.requests.filter((r) => r.url === url);
    if (!rs.length) fail(`no request to ${url}`);
    for (const r of rs) if (r.header !== want) fail(`${url}: x-hark-test header "${r.header}", expected "${want}"`);
  }
  if (exp.span_names) {
    const got = received.spans.map((s) => s.name).sort();
    const want = [...exp.span_names].sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) fail(`spans received ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  }
  checkSpans(exp, fail);
  checkMetrics(exp, fail);
  checkLogs(exp, fail);
  if (exp.retry) {
    const f = received.failures;
    if (f.length !== exp.retry.failures) fail(`${f.length} requests answered ${exp.retry.status}, expected ${exp.retry.failures}`);
    const after = received.requests.filter((r) => !r.error && f.length && r.url === f[0].url && r.time >= f[0].time);
    if (!after.length) fail('no request after the failure: not retried');
    else if (after[0].time - f[f.length - 1].time < exp.retry.min_gap_ms)
      fail(`retried after ${after[0].time - f[f.length - 1].time} ms, before Retry-After's ${exp.retry.min_gap_ms} ms`);
  }
  return errs;
}

function checkSpans(exp, fail) {
  if (!exp.spans) return;
  const got = received.spans;
  if (got.length !== exp.spans.length) fail(`${got.length} spans received, expected ${exp.spans.length}`);
  const bySpanId = new Map(got.map((s) => [s.spanId, s]));
  for (const e of exp.spans) {
    const s = bySpanId.get(e.span_id);
    if (!s) { fail(`span ${e.name} (${e.span_id}) not received`); continue; }
    const where = `span ${e.name}`;
    if (s.name !== e.name) fail(`${where}: name ${s.name}`);
    if (s.traceId !== e.trace_id) fail(`${where}: trace id ${s.traceId}, expected ${e.trace_id}`);
    if ((s.parentSpanId || '') !== (e.parent_span_id || '')) fail(`${where}: parent ${s.parentSpanId}, expected ${e.parent_span_id}`);
    if ((s.kind || 0) !== e.kind) fail(`${where}: kind ${s.kind}, expected ${e.kind}`);
    if ((s.traceState || '') !== (e.trace_state || '')) fail(`${where}: trace state "${s.traceState}", expected "${e.trace_state || ''}"`);
    // Span.flags: the W3C trace flags in bits 0-7, the parent's is_remote in 8 and 9.
    if (e.flags !== undefined && (s.flags || 0) !== e.flags) fail(`${where}: flags 0x${(s.flags || 0).toString(16)}, expected 0x${e.flags.toString(16)}`);
    const start = BigInt(s.startTimeUnixNano), end = BigInt(s.endTimeUnixNano);
    if (end - start !== BigInt(e.duration_ns)) fail(`${where}: duration ${end - start} ns, expected ${e.duration_ns}`);
    const wall = BigInt(e.wall_end_ns);
    const skew = end > wall ? end - wall : wall - end;
    if (skew > 2000000000n) fail(`${where}: end ${end} is ${skew} ns from the wall clock at its end`);
    const a = attrs(s.attributes);
    for (const [k, v] of Object.entries(e.attributes)) {
      if (JSON.stringify(a[k]) !== JSON.stringify(v)) fail(`${where}: attribute ${k} = ${JSON.stringify(a[k])}, expected ${JSON.stringify(v)}`);
    }
    for (const k of Object.keys(a)) if (!(k in e.attributes)) fail(`${where}: unexpected attribute ${k}`);
    if (e.error) {
      if (!s.status || s.status.code !== 2 || s.status.message !== e.error.message)
        fail(`${where}: status ${JSON.stringify(s.status)}, expected ERROR "${e.error.message}"`);
      const ev = (s.events || []).find((x) => x.name === 'exception');
      if (!ev) fail(`${where}: no exception event`);
      else {
        const ea = attrs(ev.attributes);
        // A failure of NULL type: exception.type is OTLP's null, an empty AnyValue.
        const wantType = e.error.type === null ? { type: 'empty' } : { type: 'string', value: e.error.type };
        if (JSON.stringify(ea['exception.type']) !== JSON.stringify(wantType)) fail(`${where}: exception.type ${JSON.stringify(ea['exception.type'])}, expected ${JSON.stringify(wantType)}`);
        if (!ea['exception.message'] || ea['exception.message'].value !== e.error.message) fail(`${where}: exception.message ${JSON.stringify(ea['exception.message'])}`);
        if (ev.timeUnixNano !== s.endTimeUnixNano) fail(`${where}: exception event at ${ev.timeUnixNano}, span ends ${s.endTimeUnixNano}`);
      }
    } else if (s.status && s.status.code) {
      fail(`${where}: status ${JSON.stringify(s.status)}, expected unset`);
    }
    // A parent received encloses its children.
    const p = s.parentSpanId && bySpanId.get(s.parentSpanId);
    if (p && (BigInt(p.startTimeUnixNano) > start || BigInt(p.endTimeUnixNano) < end)) fail(`${where}: not within its parent ${p.name}`);
    if (s._scope && s._scope.name !== 'hark') fail(`${where}: scope ${JSON.stringify(s._scope)}`);
  }
  if (exp.traceparent_out) {
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/.exec(exp.traceparent_out.header);
    if (!m) fail(`outgoing traceparent ${exp.traceparent_out.header} is malformed`);
    else {
      const s = bySpanId.get(m[2]);
      if (!s) fail(`outgoing traceparent names span ${m[2]}, which was not received`);
      else {
        if (s.name !== exp.traceparent_out.span_name) fail(`outgoing traceparent names ${s.name}, expected ${exp.traceparent_out.span_name}`);
        if (s.traceId !== m[1]) fail(`outgoing traceparent's trace ${m[1]} is not its span's ${s.traceId}`);
      }
      if (m[1] !== exp.traceparent_out.incoming_trace_id) fail(`outgoing trace ${m[1]} does not continue the incoming ${exp.traceparent_out.incoming_trace_id}`);
    }
  }
}

// Exponential index at `scale` of a value: the bucket (base^i, base^(i+1)].
function expIndex(v, scale) {
  return Math.ceil(Math.log2(v) * 2 ** scale) - 1;
}

function checkMetrics(exp, fail) {
  if (!exp.metrics) return;
  const last = (name) => {
    const ms = received.metrics.filter((m) => m.name === name);
    return ms.length ? ms[ms.length - 1] : null;
  };
  const h = last('hark.event.duration');
  const c = last('hark.events');
  if (!h || !h.exponentialHistogram) { fail('no hark.event.duration exponential histogram received'); return; }
  if (h.unit !== 'ns') fail(`hark.event.duration unit ${h.unit}`);
  if (h.exponentialHistogram.aggregationTemporality !== 2) fail('hark.event.duration is not cumulative');
  if (!c || !c.sum || !c.sum.isMonotonic) fail('no monotonic hark.events sum received');
  for (const e of exp.metrics) {
    const where = `metrics ${e.name}`;
    const dp = (h.exponentialHistogram.dataPoints || []).find((p) => attrs(p.attributes).event?.value === e.name);
    if (!dp) { fail(`${where}: no data point`); continue; }
    if (dp.scale !== exp.scale) fail(`${where}: scale ${dp.scale}, expected ${exp.scale}`);
    if (dp.count !== String(e.count)) fail(`${where}: count ${dp.count}, expected ${e.count}`);
    if (Math.abs(dp.sum - e.sum_ns) > 1e-6 * Math.max(1, e.sum_ns)) fail(`${where}: sum ${dp.sum}, expected ${e.sum_ns}`);
    if (e.count && (dp.min !== e.min_ns || dp.max !== e.max_ns)) fail(`${where}: min/max ${dp.min}/${dp.max}, expected ${e.min_ns}/${e.max_ns}`);
    // The expected OTLP buckets, from hark's own buckets: each hark bucket's
    // midpoint (its one value below 16 ns) decides the exponential bucket.
    let zero = 0;
    const want = new Map();
    for (const b of e.buckets) {
      if (b.lower_ns === 0) { zero += b.count; continue; }
      const mid = b.lower_ns < 15.5 ? Math.round(b.lower_ns) : (b.lower_ns + b.upper_ns) / 2;
      const k = expIndex(mid, exp.scale);
      want.set(k, (want.get(k) || 0) + b.count);
    }
    if (String(zero) !== (dp.zeroCount || '0')) fail(`${where}: zero count ${dp.zeroCount}, expected ${zero}`);
    const keys = [...want.keys()].sort((a, b) => a - b);
    const off = keys.length ? keys[0] : 0;
    const pos = dp.positive || {};
    if (keys.length && (pos.offset || 0) !== off) fail(`${where}: offset ${pos.offset}, expected ${off}`);
    const counts = (pos.bucketCounts || []).map(Number);
    const gotMap = new Map();
    counts.forEach((n, i) => { if (n) gotMap.set((pos.offset || 0) + i, n); });
    for (const k of keys) if (gotMap.get(k) !== want.get(k)) fail(`${where}: bucket ${k} holds ${gotMap.get(k)}, expected ${want.get(k)}`);
    for (const k of gotMap.keys()) if (!want.has(k)) fail(`${where}: unexpected bucket ${k}`);
    const total = counts.reduce((a, b) => a + b, 0) + zero;
    if (String(total) !== dp.count) fail(`${where}: buckets hold ${total}, count says ${dp.count}`);
    const cp = c && (c.sum.dataPoints || []).find((p) => attrs(p.attributes).event?.value === e.name);
    if (!cp || cp.asInt !== String(e.count)) fail(`${where}: hark.events ${cp && cp.asInt}, expected ${e.count}`);
  }
}

function checkLogs(exp, fail) {
  if (!exp.logs) return;
  const got = received.logs;
  if (got.length !== exp.logs.length) fail(`${got.length} log records received, expected ${exp.logs.length}`);
  for (const e of exp.logs) {
    const l = got.find((x) => x.body && x.body.stringValue === e.body);
    if (!l) { fail(`log "${e.body}" not received`); continue; }
    if (l.severityNumber !== e.severity) fail(`log "${e.body}": severity ${l.severityNumber}, expected ${e.severity}`);
    if ((l.traceId || '') !== (e.trace_id || '')) fail(`log "${e.body}": trace ${l.traceId}, expected ${e.trace_id}`);
    if ((l.spanId || '') !== (e.span_id || '')) fail(`log "${e.body}": span ${l.spanId}, expected ${e.span_id}`);
    if (e.flags !== undefined && (l.flags || 0) !== e.flags) fail(`log "${e.body}": flags 0x${(l.flags || 0).toString(16)}, expected 0x${e.flags.toString(16)}`);
    const span = received.spans.find((s) => s.traceId === l.traceId && s.spanId === l.spanId);
    if (e.trace_id && !span) fail(`log "${e.body}": its span ${l.spanId} was not received`);
    // The line was logged inside its event: its time lies within the span.
    if (e.inside_span && span) {
      const t = BigInt(l.timeUnixNano);
      if (t < BigInt(span.startTimeUnixNano) || t > BigInt(span.endTimeUnixNano))
        fail(`log "${e.body}": time ${t} outside its span ${span.name} [${span.startTimeUnixNano}, ${span.endTimeUnixNano}]`);
    }
    if (e.wall_ns) {
      const d = BigInt(l.timeUnixNano) - BigInt(e.wall_ns);
      if (d > 2000000000n || d < -2000000000n) fail(`log "${e.body}": time ${l.timeUnixNano} is ${d} ns from the wall clock when logged`);
    }
    for (const [k, v] of Object.entries(e.attributes || {})) {
      const a = attrs(l.attributes);
      if (JSON.stringify(a[k]) !== JSON.stringify(v)) fail(`log "${e.body}": attribute ${k} = ${JSON.stringify(a[k])}, expected ${JSON.stringify(v)}`);
    }
    if (e.dropped_attributes !== undefined && (l.droppedAttributesCount || 0) !== e.dropped_attributes)
      fail(`log "${e.body}": ${l.droppedAttributesCount || 0} attributes dropped, expected ${e.dropped_attributes}`);
  }
}

// ---- the server --------------------------------------------------------------------

const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.method === 'POST' && Req[req.url]) return handleOtlp(req, body, res);
    if (req.method === 'POST' && req.url === '/control') {
      failNext = JSON.parse(body.toString('utf8'));
      res.writeHead(200);
      return res.end('ok');
    }
    if (req.method === 'POST' && req.url === '/check') {
      let errs;
      try {
        errs = check(JSON.parse(body.toString('utf8')));
      } catch (e) {
        errs = ['check failed: ' + e.stack];
      }
      received = freshState();
      failNext = null;
      res.writeHead(errs.length ? 422 : 200, { 'Content-Type': 'text/plain' });
      return res.end(errs.length ? errs.join('\n') + '\n' : 'ok\n');
    }
    if (req.method === 'POST' && req.url === '/received') {
      const out = {
        spans: received.spans.map((sp) => ({ ...sp, attributes: attrs(sp.attributes), _meta: undefined })),
        logs: received.logs.map((l) => ({ ...l, attributes: attrs(l.attributes), body: anyValue(l.body), _meta: undefined })),
        metrics: received.metrics.map((m) => ({ ...m, _meta: undefined })),
        resources: received.resources,
        requests: received.requests,
      };
      received = freshState();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(out));
    }
    // What arrived so far, kept (unlike /check): a line per span, its name and
    // the process.pid of its resource, tab-separated.
    if (req.method === 'POST' && req.url === '/seen') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return res.end(received.spans.map((s) => `span\t${s.name}\t${s._pid}\n`).join(''));
    }
    if (req.method === 'POST' && req.url === '/quit') {
      res.writeHead(200);
      res.end('bye');
      server.close(() => process.exit(0));
      server.closeAllConnections();
      return;
    }
    res.writeHead(404);
    res.end();
  });
};
const tls = arg('--tls-cert') && {
  cert: fs.readFileSync(arg('--tls-cert')),
  key: fs.readFileSync(arg('--tls-key')),
};
if (tls && arg('--tls-client-ca')) {
  tls.ca = fs.readFileSync(arg('--tls-client-ca'));
  tls.requestCert = true;
  tls.rejectUnauthorized = true;
}
const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});
