import type { ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import { changeMarker } from '../db/read-cache.js';
import { clockView } from './clock.service.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import type { BackgroundService } from '../domains/domain.js';

// The dashboard's push channel (docs/dashboard.md#live-updates): GET /_emulator/ui/events is a server-sent event
// stream that says "changed" whenever this sandbox's database or clock has changed, so an open page refetches its
// feed at once instead of waiting for its next poll. The notice carries no data beyond the emulated time: the page
// reads everything from the feed, so there is one read model, and a notice lost is only a late redraw.
//
// Cheap by construction: one timer per sandbox, running only while at least one stream is open, compares the
// database's change marker (db/read-cache.ts: a counter read, no query of any table) and the clock's state every
// WATCH_MS. Every write moves the marker, the clock's own moves included (advance, freeze and resume are stored in
// `meta`; a flowing clock stores its high-water mark once a second), so a clock move is a notice too.

/** How often the marker is compared while a stream is open: the most a notice lags behind a change. */
export const WATCH_MS = 100;
/** A comment line now and then, so a proxy or the browser never takes an idle stream for a dead one. */
const HEARTBEAT_MS = 15_000;
/** What the browser waits before reconnecting a dropped stream (the SSE `retry` field). */
const RETRY_MS = 2_000;
/** The media type of the dashboard's and the listen relay's event streams. */
export const EVENT_STREAM_TYPE = 'text/event-stream; charset=utf-8';
/** Streams one sandbox keeps open at once; more are refused (429) so a runaway client cannot pile them up. */
export const MAX_STREAMS = 64;

export interface UiEvents {
  /** Streams open now. */
  open(): number;
  /** Take over a request's response as an event stream; false when the limit is reached. */
  attach(response: ServerResponse): boolean;
  /** End every stream (the app is closing). */
  closeAll(): void;
}

/**
 * Each sandbox's streams (docs/architecture.md#runtime), so the server can end a session's streams when it closes
 * (see endUiEvents). Made when the first page opens a stream; open pages stay connected across a reset.
 */
export const uiEventsSlot: StateSlot<UiEvents | null> = {
  name: 'emulator.uiEvents',
  create: () => null,
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

/** End a sandbox's event streams, if it has any. */
export function endUiEvents(ctx: AppContext): void {
  ctx.runtime.get(uiEventsSlot)?.closeAll();
}

/** The sandbox's event streams, made when the first page opens one. */
export function uiEvents(ctx: AppContext): UiEvents {
  const existing = ctx.runtime.get(uiEventsSlot);
  if (existing) return existing;
  const events = makeUiEvents(ctx);
  ctx.runtime.set(uiEventsSlot, events);
  return events;
}

/**
 * Background service (emulator.domain.ts): a sandbox's open streams end when it closes, before the server does, or
 * its listener would wait for them forever (docs/dashboard.md#live-updates).
 */
export const uiEventsService: BackgroundService = (ctx) => () => endUiEvents(ctx);

function makeUiEvents(ctx: AppContext): UiEvents {
  const streams = new Set<ServerResponse>();
  let timer: NodeJS.Timeout | null = null;
  let lastBeat = 0;
  let last = '';

  const marker = () => {
    const clock = clockView(ctx);
    // A flowing clock's `now` moves all the time: only its mode and offset are part of the marker.
    return `${changeMarker(ctx.db)}|${clock.mode}|${clock.mode === 'frozen' ? clock.now : clock.offsetMs}`;
  };

  const broadcast = (text: string) => {
    for (const stream of streams) stream.write(text);
  };

  const tick = () => {
    let current: string;
    try {
      current = marker();
    } catch {
      return; // the database is closing; the app's close ends the streams
    }
    const now = Date.now();
    if (current !== last) {
      last = current;
      lastBeat = now;
      broadcast(`event: changed\ndata: ${JSON.stringify({ now: ctx.clock.nowIso() })}\n\n`);
    } else if (now - lastBeat >= HEARTBEAT_MS) {
      lastBeat = now;
      broadcast(': still here\n\n');
    }
  };

  const stopIfIdle = () => {
    if (streams.size > 0 || timer === null) return;
    clearInterval(timer);
    timer = null;
  };

  return {
    open: () => streams.size,
    attach(response) {
      if (streams.size >= MAX_STREAMS) return false;
      response.writeHead(200, {
        'content-type': EVENT_STREAM_TYPE,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'x-accel-buffering': 'no',
      });
      // The first notice says "ready": the page fetches the feed once on it, so nothing that changed while the
      // stream was (re)connecting is missed.
      response.write(`retry: ${RETRY_MS}\nevent: ready\ndata: ${JSON.stringify({ now: ctx.clock.nowIso() })}\n\n`);
      streams.add(response);
      response.once('close', () => {
        streams.delete(response);
        stopIfIdle();
      });
      if (timer === null) {
        last = marker();
        lastBeat = Date.now();
        timer = setInterval(tick, WATCH_MS);
        timer.unref();
      }
      return true;
    },
    closeAll() {
      for (const stream of streams) stream.end();
      streams.clear();
      stopIfIdle();
    },
  };
}
