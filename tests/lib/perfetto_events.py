#!/usr/bin/env python3
"""Reads `protoc --decode=perfetto.protos.Trace docs/gpuspy_perfetto.proto` text from stdin and
prints one JSON object per line: each track as last described ({"track": uuid, "name", "pid",
"tid", "parent", "counter"}, names taken from the thread/process descriptor when there) and each
TrackEvent with its interned strings resolved ({"type", "ts", "track", "track_name", "name",
"cat", "flow_ids", "terminating_flow_ids", "args", "counter_value"}). It checks what Perfetto's
readers rely on, and exits 1 with a line per problem: every iid defined earlier on the sequence
since its incremental state was last cleared (sequence_flags), the first event packet clearing
it, every track_uuid described, and BEGIN/END balanced on every track once sorted by time
(equal times in file order, as trace processor sorts).

usage: protoc --decode=... < T | tests/lib/perfetto_events.py
"""
import json
import re
import sys

REPEATED = {'packet', 'debug_annotations', 'event_names', 'event_categories',
            'debug_annotation_names', 'flow_ids', 'terminating_flow_ids', 'category_iids'}
FIELD = re.compile(r'^\s*(\w+): (.*)$')
OPEN = re.compile(r'^\s*(\w+) \{$')


def value(text):
    if text.startswith('"'):
        # protoc writes C escapes, octal for bytes outside ASCII
        raw = text[1:-1].encode('latin-1').decode('unicode_escape').encode('latin-1')
        return raw.decode('utf-8', 'replace')
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text  # an enum's name, true/false


def parse(lines):
    """The top-level packets, one at a time, as dicts."""
    stack = [{}]
    for line in lines:
        line = line.rstrip('\n')
        if not line.strip():
            continue
        m = OPEN.match(line)
        if m:
            child = {}
            parent = stack[-1]
            if m.group(1) in REPEATED:
                parent.setdefault(m.group(1), []).append(child)
            else:
                parent[m.group(1)] = child
            stack.append(child)
            continue
        if line.strip() == '}':
            stack.pop()
            if len(stack) == 1 and stack[0].get('packet'):
                yield stack[0].pop('packet')[0]
            continue
        m = FIELD.match(line)
        if not m:
            raise SystemExit('perfetto_events: cannot read line: ' + line)
        v = value(m.group(2))
        if m.group(1) in REPEATED:
            stack[-1].setdefault(m.group(1), []).append(v)
        else:
            stack[-1][m.group(1)] = v


def main():
    problems = []
    interned = None  # None: no incremental state yet
    tracks, events = {}, []
    for n, p in enumerate(parse(sys.stdin)):
        td = p.get('track_descriptor')
        if td:
            t = tracks.setdefault(td['uuid'], {'track': td['uuid']})
            for k in ('process', 'thread'):
                if k in td:
                    t['pid'] = td[k].get('pid')
                    if 'tid' in td[k]:
                        t['tid'] = td[k]['tid']
                    name = td[k].get('thread_name', td[k].get('process_name'))
                    if name:
                        t['name'] = name
            if 'name' in td:
                t['name'] = td['name']
            if 'parent_uuid' in td:
                t['parent'] = td['parent_uuid']
            t['counter'] = 'counter' in td
        te = p.get('track_event')
        if te is None:
            continue
        flags = p.get('sequence_flags', 0)
        if flags & 1:
            interned = {'event_names': {}, 'event_categories': {}, 'debug_annotation_names': {}}
        if interned is None:
            problems.append(f'packet {n}: an event before the incremental state was cleared')
            interned = {'event_names': {}, 'event_categories': {}, 'debug_annotation_names': {}}
        for kind, table in interned.items():
            for e in p.get('interned_data', {}).get(kind, []):
                table[e['iid']] = e['name']

        def lookup(kind, iid):
            if iid not in interned[kind]:
                problems.append(f'packet {n}: {kind} iid {iid} not defined')
            return interned[kind].get(iid)
        ev = {'type': te.get('type'), 'ts': p.get('timestamp'), 'track': te.get('track_uuid'),
              'index': n}
        if 'name_iid' in te:
            ev['name'] = lookup('event_names', te['name_iid'])
        if 'category_iids' in te:
            ev['cat'] = ','.join(lookup('event_categories', i) or '' for i in te['category_iids'])
        for k in ('flow_ids', 'terminating_flow_ids', 'counter_value'):
            if k in te:
                ev[k] = te[k]
        args = {}
        for a in te.get('debug_annotations', []):
            key = lookup('debug_annotation_names', a.get('name_iid'))
            args[key] = next((v for k, v in a.items() if k != 'name_iid'), None)
        if args:
            ev['args'] = args
        events.append(ev)
    for ev in events:
        if ev['track'] not in tracks:
            problems.append(f'packet {ev["index"]}: track {ev["track"]} never described')
        else:
            ev['track_name'] = tracks[ev['track']].get('name')
    depth = {}
    for ev in sorted(events, key=lambda e: (e['ts'], e['index'])):
        if ev['type'] == 'TYPE_SLICE_BEGIN':
            depth[ev['track']] = depth.get(ev['track'], 0) + 1
        elif ev['type'] == 'TYPE_SLICE_END':
            depth[ev['track']] = depth.get(ev['track'], 0) - 1
            if depth[ev['track']] < 0:
                problems.append(f'packet {ev["index"]}: END with no slice open on its track')
                depth[ev['track']] = 0
    problems += [f'track {t}: {d} slices never ended' for t, d in depth.items() if d]
    for t in tracks.values():
        print(json.dumps(t))
    for ev in events:
        print(json.dumps(ev))
    for p in problems[:20]:
        print('perfetto_events: ' + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
