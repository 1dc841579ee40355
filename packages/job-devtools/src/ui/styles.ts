// The panel's own CSS, inside its shadow root: the page's rules never reach
// these elements, and these never reach the page. Every size is explicit so
// nothing depends on what the host element would otherwise inherit.
// `contain: strict` on the lanes, the log and their rows: a row whose text
// changes every frame is laid out alone, not with the whole panel.
export const PANEL_CSS = `
.root { all: initial; box-sizing: border-box; display: flex; flex-direction: column; width: 100%; height: 100%;
  font: 12px/1.4 ui-sans-serif, system-ui, sans-serif; color: #e6e6e6; background: #16181d; border-top: 1px solid #3a3f4b; }
.root *, .root *::before, .root *::after { box-sizing: border-box; }
.root.dragging { outline: 2px dashed #6aa9ff; outline-offset: -4px; }
header, .counts, .filters { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; padding: 4px 8px; border-bottom: 1px solid #2a2e37; }
header strong { font-size: 12px; font-weight: 600; color: #fff; margin-right: 4px; }
button, select, input { font: inherit; font-size: 12px; color: #e6e6e6; background: #232733; border: 1px solid #3a3f4b; border-radius: 3px; padding: 1px 6px; height: 22px; margin: 0; }
button { cursor: pointer; }
button:hover { background: #2d3342; }
input[type='file'] { width: 190px; padding: 1px 2px; }
input[type='text'], input[type='search'] { width: 110px; }
.conn { font-size: 11px; padding: 0 6px; border-radius: 8px; background: #2a2e37; }
.conn[data-connection='connected'] { color: #7ee2a8; }
.conn[data-connection='disconnected'] { color: #ff8f8f; }
.banner { padding: 3px 8px; font-size: 12px; background: #4a3a12; color: #ffe2a1; border-bottom: 1px solid #6b5518; }
.banner.error { background: #4a1c1c; color: #ffc2c2; border-color: #6b2525; }
.banner[hidden] { display: none; }
.counts span.count { display: inline-flex; gap: 4px; align-items: baseline; margin-right: 8px; }
.counts b { font-weight: 600; color: #fff; font-variant-numeric: tabular-nums; }
.legend { display: flex; flex-wrap: wrap; align-items: center; gap: 2px 10px; padding: 3px 8px; font-size: 11px; color: #aab2c5; border-bottom: 1px solid #2a2e37; }
.legend-item { display: inline-flex; align-items: center; gap: 4px; }
.legend .swatch { display: inline-block; width: 18px; height: 10px; border-radius: 2px; }
.legend b { font-weight: 700; }
header .close { margin-left: auto; }
.main { flex: 1 1 auto; display: flex; min-height: 0; }
.timeline { position: relative; flex: 1 1 auto; display: flex; flex-direction: column; min-width: 0; min-height: 0; }
.axis { flex: 0 0 18px; display: flex; font-size: 10px; color: #8b93a6; border-bottom: 1px solid #2a2e37; }
.axis-title { flex: 0 0 220px; padding: 2px 6px; border-right: 1px solid #2a2e37; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.ticks { position: relative; flex: 1 1 auto; overflow: hidden; }
.tick { position: absolute; top: 2px; padding-left: 3px; border-left: 1px solid #3a3f4b; white-space: nowrap; font-variant-numeric: tabular-nums; }
.hint { position: absolute; left: 230px; right: 0; top: 30px; }
.hint[hidden] { display: none; }
.hint pre { font: 11px/1.5 ui-monospace, monospace; color: #e6e6e6; background: #232733; padding: 6px 8px; border-radius: 3px; white-space: pre-wrap; overflow-wrap: anywhere; }
.lanes { position: relative; flex: 1 1 auto; overflow-y: auto; overflow-x: hidden; min-width: 0; contain: strict; }
.viewport { position: sticky; top: 0; display: flex; overflow: hidden; }
.labels { position: relative; width: 220px; flex: 0 0 220px; overflow: hidden; border-right: 1px solid #2a2e37; }
.row { position: absolute; left: 0; right: 0; height: 20px; contain: strict; display: flex; gap: 6px; align-items: center; padding: 0 6px; white-space: nowrap; overflow: hidden; cursor: pointer; }
/* A pooled row the frame does not use is hidden: display: flex above would show it with its old text. */
.row[hidden], .log-row[hidden] { display: none; }
.row:hover { background: #20242e; }
.row.selected { background: #2b3a55; }
.row .label { overflow: hidden; text-overflow: ellipsis; flex: 1 1 auto; }
.row .state { font-size: 11px; color: #aab2c5; }
/* Side by side: the process a row belongs to, first in the row, in its colour. */
.row .process { order: -1; flex: 0 0 auto; max-width: 72px; overflow: hidden; text-overflow: ellipsis; font-size: 11px; font-weight: 600; }
.row .process[hidden] { display: none; }
.row .group { color: #6aa9ff; font-size: 11px; }
canvas { display: block; flex: 1 1 auto; min-width: 0; cursor: grab; }
.side { flex: 0 0 34%; display: flex; flex-direction: column; border-left: 1px solid #2a2e37; min-width: 0; min-height: 0; overflow: hidden; }
/* The details scroll within their share of the side, with a scrollbar always drawn: a long history never looks cut off. */
.details { flex: 0 1 auto; min-height: 0; max-height: 60%; overflow-y: scroll; scrollbar-width: thin; scrollbar-color: #5a6172 #1d2027; padding: 6px 8px; border-bottom: 1px solid #2a2e37; }
.details h3 { font-size: 12px; margin: 0 0 4px; font-weight: 600; color: #fff; }
.details dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 8px; margin: 0 0 6px; }
.details dt { color: #8b93a6; }
.details dd { margin: 0; overflow-wrap: anywhere; }
.details ol { margin: 0; padding-left: 18px; }
.details button.link { height: auto; padding: 0 4px; color: #8cc4ff; background: none; border: none; text-decoration: underline; }
.log { position: relative; flex: 1 1 auto; overflow-y: auto; font: 11px/18px ui-monospace, monospace; contain: strict; }
.log-row { position: absolute; left: 0; right: 0; height: 18px; contain: strict; padding: 0 6px; white-space: pre; overflow: hidden; cursor: pointer; }
.log-row:hover { background: #20242e; }
.log-row.selected { background: #2b3a55; }
.empty { padding: 12px; color: #8b93a6; }
`
