#!/usr/bin/env python3
"""Well- and badly-behaved HTTP clients for tests/http.bats, against tests/unit/http_driver.

usage: http_clients.py COMMAND ADDR [ARGS]     (ADDR: 127.0.0.1:PORT as the driver printed it)

  head ADDR SIZE           HEAD /metrics: headers only, Content-Length SIZE (a --big SIZE driver),
                           and a GET on the same connection gets SIZE bytes
  keepalive ADDR           keep-alive, pipelining, Connection: close and HTTP/1.0 semantics
  malformed ADDR           malformed requests: each gets its 4xx and a close, or just a close
  flood ADDR N             N clients at once: each gets a whole 200, a 503 or a close unanswered
                           (over a connection limit), none hangs
  get ADDR N MAX_S         N sequential GET /metrics, each answered within MAX_S seconds
  stuck ADDR               GET /metrics with a tiny receive buffer, never read; prints
                           "stuck sent", then "stuck closed after S" once the server resets it
  slowloris ADDR           sends a request a byte a second; prints "slowloris closed after S"
  hold ADDR                opens an idle keep-alive connection and a half request, prints
                           "holding", and keeps them until killed
  crowd ADDR N MODE [SRC]  N connections from address SRC (default 127.0.0.2) that never finish
                           a request: MODE slow (a byte a second) or idle (nothing); each one
                           closed is opened again; prints "crowd MODE: ..." once all are open
  scrape ADDR N            N sequential scrapes (5 s each); prints "scrape ok=K of N ..."

A 200's body must hold $HTTP_MARK (default "driver_ticks ", the driver's metric).
Exits 1 with the reasons on stderr when the server misbehaves."""
import os
import random
import select
import socket
import sys
import threading
import time

IO_TIMEOUT = 5.0
MARK = os.environ.get('HTTP_MARK', 'driver_ticks ').encode()


def split(addr):
    host, port = addr.rsplit(':', 1)
    return host.strip('[]'), int(port)


def fail(msg):
    print(f'http_clients: {msg}', file=sys.stderr)
    sys.exit(1)


class Conn:
    """A raw connection with a response parser that checks framing, not just content."""

    def __init__(self, addr, timeout=IO_TIMEOUT, rcvbuf=None):
        host, port = split(addr)
        self.sock = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET)
        if rcvbuf:
            # before connect(), so that the window the client offers is small from the start
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.buf = bytearray()

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError('connection closed')
        self.buf += data

    def response(self, head=False):
        """(status, headers, body, raw head); EOFError when the server closed first."""
        while b'\r\n\r\n' not in self.buf:
            self._fill()
        end = self.buf.index(b'\r\n\r\n')
        raw = bytes(self.buf[:end])
        del self.buf[:end + 4]
        lines = raw.decode('latin-1').split('\r\n')
        version, code, _ = lines[0].split(' ', 2)
        if version != 'HTTP/1.1':
            raise ValueError(f'bad status line {lines[0]!r}')
        headers = {}
        for line in lines[1:]:
            name, value = line.split(':', 1)
            headers[name.strip().lower()] = value.strip()
        length = int(headers['content-length'])
        body = b''
        if not head:
            while len(self.buf) < length:
                self._fill()
            body = bytes(self.buf[:length])
            del self.buf[:length]
        return int(code), headers, body, raw

    def at_eof(self):
        """True when the server has closed (EOF or reset) with nothing more sent."""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return not self.buf
                self.buf += data
        except ConnectionResetError:
            return not self.buf

    def close(self):
        self.sock.close()


def get_request(path='/metrics', extra=''):
    return f'GET {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n'.encode()


def cmd_head(addr, size):
    size = int(size)
    c = Conn(addr)
    c.send(b'HEAD /metrics HTTP/1.1\r\nHost: test\r\n\r\n')
    code, headers, _, _ = c.response(head=True)
    if code != 200 or int(headers['content-length']) != size:
        fail(f'HEAD /metrics: {code} {headers}')
    if not headers['content-type'].startswith('text/plain; version=0.0.4'):
        fail(f'HEAD /metrics: content type {headers["content-type"]}')
    # whatever followed the head would be taken as the next response's status line
    c.send(get_request())
    code, headers, body, _ = c.response()
    if code != 200 or len(body) != size or b'driver_ticks ' not in body:
        fail(f'GET after HEAD: {code}, {len(body)} bytes')
    c.send(b'HEAD /nope HTTP/1.1\r\nHost: test\r\n\r\n')
    code, headers, _, _ = c.response(head=True)
    if code != 404 or int(headers['content-length']) == 0:
        fail(f'HEAD /nope: {code} {headers}')
    c.send(b'HEAD / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n')
    code, headers, _, _ = c.response(head=True)
    if code != 200 or not headers['content-type'].startswith('text/html'):
        fail(f'HEAD /: {code} {headers}')
    if not c.at_eof():
        fail(f'bytes after the HEAD response: {bytes(c.buf[:80])!r}')
    print(f'head ok: Content-Length {size}, no body')


def cmd_keepalive(addr):
    # three pipelined requests in one write; the last asks for the close
    c = Conn(addr)
    c.send(get_request() + get_request('/') + get_request('/nope', 'Connection: close\r\n'))
    codes = [c.response()[0] for _ in range(3)]
    if codes != [200, 200, 404]:
        fail(f'pipelined: {codes}')
    if not c.at_eof():
        fail('pipelined: not closed after Connection: close')
    # keep-alive across separate writes, a 405 without a body keeps the connection
    c = Conn(addr)
    for req in (get_request(), b'DELETE /metrics HTTP/1.1\r\nHost: test\r\n\r\n',
                get_request('/metrics?name[]=x')):
        c.send(req)
        code, headers, _, _ = c.response()
        if 'connection' in headers:
            fail(f'keep-alive: Connection: {headers["connection"]}')
    if code != 200:
        fail(f'keep-alive: query string: {code}')
    c.close()
    # HTTP/1.0 closes unless asked not to
    c = Conn(addr)
    c.send(b'GET /metrics HTTP/1.0\r\n\r\n')
    code, headers, _, _ = c.response()
    if code != 200 or headers.get('connection', '').lower() != 'close' or not c.at_eof():
        fail(f'HTTP/1.0: {code} {headers}, not closed')
    c = Conn(addr)
    for _ in range(2):
        c.send(b'GET /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')
        code, headers, _, _ = c.response()
        if code != 200 or headers.get('connection', '').lower() != 'keep-alive':
            fail(f'HTTP/1.0 keep-alive: {code} {headers}')
    c.close()
    # a client that shuts its write side after its requests still gets them all answered
    c = Conn(addr)
    c.send(get_request() + get_request('/'))
    c.sock.shutdown(socket.SHUT_WR)
    codes = [c.response()[0] for _ in range(2)]
    if codes != [200, 200] or not c.at_eof():
        fail(f'half-closed: {codes}')
    # absolute-form target and leading empty lines
    c = Conn(addr)
    c.send(b'\r\nGET http://test:9478/metrics HTTP/1.1\r\nHost: test\r\n\r\n')
    code, _, body, _ = c.response()
    if code != 200 or b'driver_ticks' not in body:
        fail(f'absolute-form: {code}')
    print('keepalive ok')


MALFORMED = [
    ('garbage line', b'hello world\r\n\r\n', {400}),
    ('no version', b'GET /metrics\r\n\r\n', {400}),
    ('HTTP/2.0', b'GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n', {505}),
    ('HTTP/0.9 style', b'GET /metrics\r\n', {400}),
    ('bare CR', b'GET /metrics HTTP/1.1\rHost: x\r\n\r\n', {400}),
    ('header without colon', b'GET /metrics HTTP/1.1\r\nHost x\r\n\r\n', {400}),
    ('space before colon', b'GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n', {400}),
    ('obs-fold', b'GET /metrics HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n', {400}),
    ('HTTP/1.1 without Host', b'GET /metrics HTTP/1.1\r\n\r\n', {400}),
    ('bad Content-Length', b'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n',
     {400}),
    ('huge Content-Length',
     b'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n',
     {413}),
    ('GET with a body', b'GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello',
     {413}),
    ('chunked', b'GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
     {400}),
    ('POST with a body', b'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc',
     {405}),
    ('20 KiB request line', b'GET /' + b'a' * 20480 + b' HTTP/1.1\r\nHost: x\r\n\r\n', {414}),
    ('100 KiB header', b'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'a' * 102400 +
     b'\r\n\r\n', {431}),
    ('binary blob', random.Random(1).randbytes(65536), {400}),
    ('64 KiB token', b'G' * 65536, {414}),
]

# What libmicrohttpd answers as if well-formed (the hand-written server refused them): each is
# answered, and the connection stays usable.
TOLERATED = [
    ('two spaces', b'GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n'),
    ('NUL in a header', b'GET /metrics HTTP/1.1\r\nHost: x\x00y\r\n\r\n'),
    ('two Content-Lengths',
     b'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n'),
]


def skip_doubled_head(c, raw, body):
    """libmicrohttpd 0.9.75 (Debian 12) sends the head of an error it finds in its last header
    checks (Content-Length, Host) twice: the body the first head announces then starts with the
    second, and its tail follows. True (the tail consumed) when that is what came."""
    status_line = raw.split(b'\r\n')[0]
    end = body.find(b'\r\n\r\n')
    if not body.startswith(status_line + b'\r\n') or end < 0:
        return False
    try:
        while len(c.buf) < end + 4:
            c._fill()
    except (EOFError, ConnectionResetError):
        return False
    del c.buf[:end + 4]
    return True


def cmd_malformed(addr):
    errors = []
    answered = 0
    for name, data, want in MALFORMED:
        c = Conn(addr)
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed before all of it was taken: the answer is still there
        try:
            code, headers, body, raw = c.response()
        except (EOFError, ConnectionResetError):
            print(f'{name}: closed')
            continue
        except (socket.timeout, TimeoutError):
            errors.append(f'{name}: no answer and no close in {IO_TIMEOUT}s')
            continue
        answered += 1
        if code not in want:
            errors.append(f'{name}: {code}, expected {sorted(want)}')
        elif headers.get('connection', '').lower() != 'close':
            errors.append(f'{name}: {code} without Connection: close')
        elif code == 405 and headers.get('allow') != 'GET, HEAD':
            errors.append(f'{name}: 405 with Allow: {headers.get("allow")}')
        elif body.startswith(b'HTTP/') and not skip_doubled_head(c, raw, body):
            errors.append(f'{name}: {code}, then another response in the body')
        elif not c.at_eof():
            errors.append(f'{name}: {code}, then the connection stayed open or sent more')
        else:
            print(f'{name}: {code}')
        c.close()
    for name, data in TOLERATED:
        c = Conn(addr)
        c.send(data)
        code, _, _, _ = c.response()
        c.send(get_request())
        if code != 200 or c.response()[0] != 200:
            errors.append(f'{name}: {code}, expected 200 and the connection kept')
        else:
            print(f'{name}: 200 (tolerated)')
        c.close()
    # half a request, then gone
    c = Conn(addr)
    c.send(b'GET /metrics HTTP/1.1\r\nHo')
    c.close()
    print('half request: sent and closed')
    print(f'malformed answered={answered}')
    if errors:
        fail('; '.join(errors))


def one_client(addr, results, i, barrier, mark):
    try:
        barrier.wait()
        c = Conn(addr, timeout=15)
        try:
            c.send(get_request(extra='Connection: close\r\n' if i % 2 else ''))
        except (BrokenPipeError, ConnectionResetError):
            pass  # a 503 may have come and gone before the request was written
        try:
            code, _, body, _ = c.response()
        except (EOFError, ConnectionResetError):
            results[i] = 'refused'  # closed unanswered over a connection limit
            return
        if code == 200 and mark in body:
            results[i] = 'ok'
        elif code == 503:
            results[i] = 'busy'
        else:
            results[i] = f'{code}'
        c.close()
    except Exception as e:  # every other outcome is a failure to report, hangs included
        results[i] = f'{type(e).__name__}: {e}'


def cmd_flood(addr, n):
    n = int(n)
    results = [None] * n
    barrier = threading.Barrier(n)
    threads = [threading.Thread(target=one_client, args=(addr, results, i, barrier, MARK))
               for i in range(n)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    ok, busy, refused = results.count('ok'), results.count('busy'), results.count('refused')
    print(f'flood ok={ok} busy={busy} refused={refused} elapsed={elapsed:.2f}')
    others = [r for r in results if r not in ('ok', 'busy', 'refused')]
    if others:
        fail(f'{len(others)} clients got neither a 200, a 503 nor a close: '
             f'{sorted(set(others))[:5]}')


def cmd_get(addr, n, max_s):
    for i in range(int(n)):
        start = time.monotonic()
        c = Conn(addr)
        c.send(get_request(extra='Connection: close\r\n'))
        code, _, body, _ = c.response()
        c.close()
        took = time.monotonic() - start
        if code != 200 or MARK not in body:
            fail(f'request {i}: {code}')
        if took > float(max_s):
            fail(f'request {i} took {took:.2f}s')
    print(f'get ok: {n} requests')


def wait_closed(sock, limit):
    """Seconds until the server closed or reset the socket, reading nothing meanwhile."""
    start = time.monotonic()
    p = select.poll()
    p.register(sock, select.POLLRDHUP | select.POLLERR | select.POLLHUP)
    while time.monotonic() - start < limit:
        if p.poll(100):
            return time.monotonic() - start
    fail(f'not closed in {limit}s')


def cmd_stuck(addr):
    c = Conn(addr, rcvbuf=4096)
    c.send(get_request(extra='Connection: keep-alive\r\n'))
    start = time.monotonic()
    print('stuck sent', flush=True)
    # a reset, unlike a FIN, gets through the zero window
    after = wait_closed(c.sock, 30)
    got = 0
    try:
        while True:
            data = c.sock.recv(1 << 20)
            if not data:
                break
            got += len(data)
    except ConnectionResetError:
        pass
    print(f'stuck closed after {after:.2f}s, {got} bytes received, '
          f'{time.monotonic() - start:.2f}s', flush=True)


def cmd_slowloris(addr):
    c = Conn(addr)
    start = time.monotonic()
    req = get_request()
    for i in range(len(req)):
        try:
            c.sock.send(req[i:i + 1])
        except (BrokenPipeError, ConnectionResetError):
            break
        readable, _, _ = select.select([c.sock], [], [], 1.0)
        if readable:
            try:
                data = c.sock.recv(4096)
            except ConnectionResetError:
                data = b''
            if data:
                fail(f'slowloris: answered {data[:40]!r} instead of closed')
            break
    else:
        fail('slowloris: whole request sent without being closed')
    print(f'slowloris closed after {time.monotonic() - start:.2f}s', flush=True)


def cmd_hold(addr):
    idle = Conn(addr)
    idle.send(get_request())
    idle.response()
    half = Conn(addr)
    half.send(b'GET /metrics HTTP/1.1\r\nHo')
    print('holding', flush=True)
    while True:
        time.sleep(3600)


def cmd_crowd(addr, n, mode, source='127.0.0.2'):
    """N connections from one source address that never finish a request head: 'slow' sends a
    byte a second of a head that never ends, 'idle' sends nothing. A connection the server
    closes (or answers) is opened again a second later, so the pressure lasts until killed."""
    n = int(n)
    host, port = split(addr)
    head = get_request()[:-2]  # the head without its final empty line, then headers forever
    socks = [None] * n
    sent = [0] * n
    opened = closed = 0
    announced = False
    while True:
        for i in range(n):
            if socks[i] is None:
                s = socket.socket(socket.AF_INET)
                s.bind((source, 0))
                s.setblocking(False)
                try:
                    s.connect((host, port))
                except BlockingIOError:
                    pass
                socks[i], sent[i] = s, 0
                opened += 1
        if not announced:
            print(f'crowd {mode}: {n} connections from {source}', flush=True)
            announced = True
        deadline = time.monotonic() + 1.0
        p = select.poll()
        for s in socks:
            p.register(s, select.POLLIN | select.POLLERR | select.POLLHUP)
        while (left := deadline - time.monotonic()) > 0:
            for fd, _ in p.poll(left * 1000):
                i = next(j for j, s in enumerate(socks) if s is not None and s.fileno() == fd)
                p.unregister(fd)
                socks[i].close()
                socks[i] = None
                closed += 1
        if mode == 'slow':
            for i, s in enumerate(socks):
                if s is None:
                    continue
                byte = head[sent[i]:sent[i] + 1] if sent[i] < len(head) else b'a'
                try:
                    s.send(byte)
                    sent[i] += 1
                except OSError:
                    pass  # not connected yet, or closed: the poll above sees it


def cmd_scrape(addr, n):
    """N ordinary scrapes one after the other, each given 5 s as Prometheus would give it 10:
    prints how many got their metrics (200 with the mark), and what the others got."""
    ok, others = 0, []
    for _ in range(int(n)):
        try:
            c = Conn(addr)
            c.send(get_request(extra='Connection: close\r\n'))
            code, _, body, _ = c.response()
            c.close()
            if code == 200 and MARK in body:
                ok += 1
            else:
                others.append(str(code))
        except Exception as e:  # a refusal, a reset, a timeout: not a scrape that worked
            others.append(type(e).__name__)
    print(f'scrape ok={ok} of {n} others={",".join(others) or "none"}', flush=True)


COMMANDS = {'head': cmd_head, 'keepalive': cmd_keepalive, 'malformed': cmd_malformed,
            'flood': cmd_flood, 'get': cmd_get, 'stuck': cmd_stuck, 'slowloris': cmd_slowloris,
            'hold': cmd_hold, 'crowd': cmd_crowd, 'scrape': cmd_scrape}

if __name__ == '__main__':
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
