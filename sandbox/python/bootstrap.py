# CodeCall's Python plan bootstrap. The sandbox worker executes it with
# `python3 -I -S -B -X utf8 -c <this file> <confinement JSON>` once the
# process is confined. It speaks the worker bridge protocol on descriptors
# 0 and 1 (4-byte big-endian length, then one JSON message), reports
# ready, runs one plan and reports its result, then exits.
#
# Nothing here is a wall: the plan runs in this process and can reach and
# replace any of it. The walls are the kernel's (namespaces, seccomp,
# Landlock, rlimits, cgroup) and the server's, which checks every frame
# against the run's budgets and answers every call through its gate. The
# bootstrap keeps the same budgets so that a plan that respects the API
# meets them as a JavaScript plan does, with the same statuses.

import sys, os, json, struct, signal, time, ast, io, re, math, builtins, logging, asyncio, select, selectors

_CONF_ARG = sys.argv[1]
_CONFINEMENT = json.loads(_CONF_ARG)
# A bootstrap that executed itself again for a run under Replay
# (_hash_reexec) reads its run request from this descriptor.
_RUN_FD = int(sys.argv[2]) if len(sys.argv) > 2 else None
sys.argv = ["<plan>"]

# A plan that runs out of CPU time exits with the Go worker's status for
# it, so the server tells a CPU kill from a crash.
signal.signal(signal.SIGXCPU, lambda *_: os._exit(24))

_IN, _OUT = 0, 1
_ENTRY_OVERHEAD = 43  # vm's entryOverhead: a log entry's JSON framing
_MAX_NAME = 256
_INPUT_ECHO = 16 << 10

# The real clock, for the run's own measures (durations, log times): a run
# under Replay gives the plan a virtual one (_Replay.install).
_mono = time.monotonic


def _send(msg):
    # A lone surrogate (valid in a Python str, not in UTF-8) becomes "?".
    b = json.dumps(msg, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8", "replace")
    data = struct.pack(">I", len(b)) + b
    view = memoryview(data)
    while view:
        n = os.write(_OUT, view)
        view = view[n:]


def _read_exact(n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(_IN, n - len(buf))
        if not chunk:
            os._exit(7)
        buf += chunk
    return bytes(buf)


def _read_frame():
    (n,) = struct.unpack(">I", _read_exact(4))
    return json.loads(_read_exact(n))


class ToolError(Exception):
    """A tool call that failed or was refused: code (e.g. ACCESS_DENIED,
    NOT_FOUND, VALIDATION, EXECUTION), message, hint (what to do next),
    reason (a policy's), retryable, tool."""

    def __init__(self, code, message, hint="", reason="", retryable=False, tool=""):
        super().__init__(f"{code}: {message}" if code else message)
        self.code, self.message, self.hint, self.reason, self.retryable, self.tool = code, message, hint, reason, retryable, tool


class _Stop(BaseException):
    """Ends the run with a status; a plan's `except Exception` does not
    catch it."""

    def __init__(self, status, error):
        super().__init__(error.get("message", status))
        self.status, self.error = status, error


class _Clock:
    """The plan's deadline, as an interval timer that raises _Stop; it
    stands still while a call waits for a person's approval."""

    def __init__(self, seconds):
        self.seconds, self.suspended = seconds, set()
        signal.signal(signal.SIGALRM, self._fire)

    def _fire(self, *_):
        raise _Stop("timeout", {"message": f"the run exceeded its timeout of {_dur(self.seconds)}"})

    def start(self):
        if self.seconds > 0:
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def suspend(self, cid):
        if not self.suspended:
            self.left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        self.suspended.add(cid)

    def resume(self, cid):
        if cid in self.suspended:
            self.suspended.discard(cid)
            if not self.suspended and self.left > 0:
                signal.setitimer(signal.ITIMER_REAL, self.left)

    def stop(self):
        signal.setitimer(signal.ITIMER_REAL, 0)


class _Replay:
    """Makes a run under vm.Replay repeatable, with JavaScript's contract
    (vm/determinism.go): a plan run again from its start reaches the same
    calls with the same inputs, so the server's journal can answer the
    calls an earlier run made.

    - every call and discovery carries its index in the run (the order
      the plan made them) on the wire;
    - random, random.Random() without a seed, uuid.uuid4 and uuid.uuid1
      draw from generators seeded with Replay.Seed;
    - time.time, time.time_ns, the datetime and date constructors of "now"
      (now, utcnow, today), time.localtime/gmtime/ctime/asctime/strftime
      without a time, time.monotonic and time.perf_counter (and their _ns
      forms) and the event loop's clock read a virtual clock: it starts at
      Replay.EpochMs and moves only when a timer (asyncio.sleep,
      call_later, wait_for's timeout) fires, to its due time, or by what
      time.sleep slept, so time spent in tool calls is not seen;
    - replies settle in the order the plan made the calls, one at a time
      and only when the plan has nothing else to run, so the
      continuations of asyncio.gather run in one order however the
      server's answers arrive;
    - a timer fires only when no call is in flight, in due-time order,
      after waiting its delay in real time.

    os.urandom, secrets and random.SystemRandom stay random: they are a
    plan's source of secrets, and a secret derived from a run's ID is no
    secret. A plan that sends one to a tool cannot be resumed; the
    server's journal sees the input differ and ends the run with
    replay_diverged. Nothing here is a wall either: the plan can undo it,
    and the journal is what catches a plan that does."""

    def __init__(self, seed, epoch_ms):
        self.seed, self.epoch_ns, self.virtual_ns = seed, epoch_ms * 1_000_000, 0
        self.sent = {}      # index -> id of a request sent and not settled
        self.arrived = {}   # index -> its reply, waiting for earlier calls
        self.index_of = {}  # id -> index
        self.due_target, self.due_real = None, 0.0
        self.busy = 0       # loop turns in a row with work ready

    # The plan's clocks.
    def now_ns(self):
        return self.epoch_ns + self.virtual_ns

    def install(self):
        """Replaces the plan's clocks and generators."""
        import random, datetime, uuid
        rp = self
        seeder = random.Random(self.seed ^ 0x9E3779B97F4A7C15)
        random.seed(self.seed)
        real_seed = random.Random.seed

        def seed(self, a=None, version=2):
            # An instance made or reseeded without a seed draws its seed
            # from the run's stream instead of os.urandom.
            return real_seed(self, seeder.getrandbits(128) if a is None else a, version)

        seed.__doc__ = real_seed.__doc__
        random.Random.seed = seed
        random.seed = random._inst.seed  # the module's, bound to the old method
        ids = random.Random(self.seed ^ 0x5851F42D4C957F2D)

        def uuid4():
            return uuid.UUID(int=ids.getrandbits(128), version=4)

        real_uuid1 = uuid.uuid1

        def uuid1(node=None, clock_seq=None):
            # A node from the run's stream (with the multicast bit, as
            # getnode's random fallback sets it) instead of this host's.
            return real_uuid1(ids.getrandbits(48) | (1 << 40) if node is None else node, clock_seq)

        uuid.uuid4, uuid.uuid1 = uuid4, uuid1

        def time_ns():
            return rp.now_ns()

        def time_():
            return rp.now_ns() / 1e9

        def elapsed_ns():
            return rp.virtual_ns

        def elapsed():
            return rp.virtual_ns / 1e9

        real_sleep = time.sleep

        def sleep(secs):
            # Blocks as before; the plan then reads the clock moved by
            # what it slept (a blocking sleep is no timer, and runs even
            # with calls in flight).
            real_sleep(secs)
            rp.virtual_ns += max(0, int(secs * 1e9))

        def at(real):
            def f(*args):
                return real(*args) if args and args[0] is not None else real(time_())
            f.__name__, f.__doc__ = real.__name__, real.__doc__
            return f

        real_strftime = time.strftime

        def strftime(format, *t):
            return real_strftime(format, *t) if t else real_strftime(format, time.localtime(time_()))

        real_asctime = time.asctime

        def asctime(*t):
            return real_asctime(*t) if t else real_asctime(time.localtime(time_()))

        for name, f in (("time", time_), ("time_ns", time_ns), ("monotonic", elapsed), ("monotonic_ns", elapsed_ns),
                        ("perf_counter", elapsed), ("perf_counter_ns", elapsed_ns), ("sleep", sleep)):
            f.__name__ = name
            setattr(time, name, f)
        for name in ("localtime", "gmtime", "ctime"):
            setattr(time, name, at(getattr(time, name)))
        time.strftime, time.asctime = strftime, asctime

        real_date, real_datetime = datetime.date, datetime.datetime

        class _DateMeta(type):
            # isinstance and issubclass answer for the real types, so
            # dates made before the switch, or by C code, still pass.
            def __instancecheck__(cls, obj):
                return isinstance(obj, real_date)

            def __subclasscheck__(cls, sub):
                return issubclass(sub, real_date)

        class _DatetimeMeta(_DateMeta):
            def __instancecheck__(cls, obj):
                return isinstance(obj, real_datetime)

            def __subclasscheck__(cls, sub):
                return issubclass(sub, real_datetime)

        class date(real_date, metaclass=_DateMeta):
            __doc__ = real_date.__doc__

            @classmethod
            def today(cls):
                return cls.fromtimestamp(time_())

        class datetime_(real_datetime, metaclass=_DatetimeMeta):
            __doc__ = real_datetime.__doc__

            @classmethod
            def now(cls, tz=None):
                return cls.fromtimestamp(time_(), tz)

            @classmethod
            def today(cls):
                return cls.fromtimestamp(time_())

            @classmethod
            def utcnow(cls):
                return cls.fromtimestamp(time_(), datetime.timezone.utc).replace(tzinfo=None)

        for c, real in ((date, real_date), (datetime_, real_datetime)):
            c.__name__, c.__qualname__, c.__module__ = real.__name__, real.__qualname__, real.__module__
        datetime.date, datetime.datetime = date, datetime_

    # Replies in the order calls were made.
    def sending(self, index, cid):
        self.sent[index] = cid
        self.index_of[cid] = index

    def arrive(self, cid, m):
        """Holds a reply until settle delivers it; False for a request
        this run no longer waits for."""
        i = self.index_of.get(cid)
        if i is None:
            return False
        self.arrived[i] = m
        return True

    def forget(self, cid):
        """A request the plan withdrew; True when its reply had arrived."""
        i = self.index_of.pop(cid, None)
        if i is None:
            return False
        self.sent.pop(i, None)
        return self.arrived.pop(i, None) is not None

    def settle(self, pending):
        """Settles the earliest call in flight if its reply is here."""
        if not self.sent:
            return False
        i = min(self.sent)
        m = self.arrived.pop(i, None)
        if m is None:
            return False
        cid = self.sent.pop(i)
        del self.index_of[cid]
        fut = pending.pop(cid, None)
        if fut is not None and not fut.done():
            fut.set_result(m)
        return True


_BUSY_TURNS = 1000


class _ReplaySelector(selectors.BaseSelector):
    """The event loop's selector under Replay. The loop asks it for I/O
    with a timeout of 0 while the plan has work ready, None when it has
    none, and the delay to its next timer when one is set: so replies are
    read, and settled one at a time in call order, only when the plan is
    idle, and a timer fires only when no call is in flight, after its
    delay in real time, moving the virtual clock to its due time."""

    def __init__(self, replay, run):
        self.real, self.replay, self.run = selectors.DefaultSelector(), replay, run

    def register(self, fileobj, events, data=None):
        return self.real.register(fileobj, events, data)

    def unregister(self, fileobj):
        return self.real.unregister(fileobj)

    def modify(self, fileobj, events, data=None):
        return self.real.modify(fileobj, events, data)

    def get_key(self, fileobj):
        return self.real.get_key(fileobj)

    def get_map(self):
        return self.real.get_map()

    def close(self):
        self.real.close()

    def select(self, timeout=None):
        rp = self.replay
        if timeout == 0:
            # Work is ready (or a timer is due): nothing from outside is
            # seen until it is done, or until the plan has spun
            # _BUSY_TURNS turns in a row (a count, so the same on every
            # run) with a call in flight, as a plan polling a call with
            # `await asyncio.sleep(0)` does: it then waits for the call.
            rp.busy += 1
            if rp.busy < _BUSY_TURNS or not rp.sent:
                return []
        else:
            rp.busy = 0
        if rp.settle(self.run.pending):
            rp.busy = 0
            return []
        if rp.sent or timeout is None:
            # A call in flight wins over any timer.
            return self.real.select(None)
        # No call in flight: the next timer fires after its delay in real
        # time, unless that passes the run's deadline.
        target = rp.virtual_ns + max(1, math.ceil(timeout * 1e9))
        if rp.due_target != target:
            rp.due_target, rp.due_real = target, _mono() + timeout
        left = rp.due_real - _mono()
        budget = signal.getitimer(signal.ITIMER_REAL)[0]
        if self.run.timeout > 0 and left > budget > 0:
            raise _Stop("timeout", {"message": f"the plan is waiting for a timer due after the run's timeout of {_dur(self.run.timeout)}"})
        if left > 0:
            events = self.real.select(left)
            if events or _mono() < rp.due_real:
                return events
        rp.virtual_ns, rp.due_target = target, None
        return []


class _ReplayLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock is the plan's virtual one."""

    def __init__(self, replay, run):
        self._replay = replay
        super().__init__(_ReplaySelector(replay, run))

    def time(self):
        return self._replay.virtual_ns / 1e9


def _dur(s):
    return f"{s:g}s" if s >= 1 else f"{int(s * 1000)}ms"


class _Logs:
    """The run's captured logs, charged as the JavaScript runtime charges
    them (message bytes plus framing and level), closed with a warning
    entry when maxLogBytes is reached."""

    def __init__(self, limit, start, warn):
        self.limit, self.used, self.entries, self.full, self.start, self.warn = limit, 0, [], False, start, warn

    def add(self, level, message):
        if self.full:
            return
        overhead = _ENTRY_OVERHEAD + len(level)
        b = message.encode("utf-8", "replace")
        now = int((_mono() - self.start) * 1000)
        if len(b) + overhead <= self.limit - self.used:
            self.used += len(b) + overhead
            self.entries.append({"level": level, "message": b.decode("utf-8"), "timeMs": now})
            return
        rest = self.limit - self.used - overhead
        if rest > 0:
            cut = b[:rest].decode("utf-8", "ignore")
            if cut:
                self.entries.append({"level": level, "message": cut, "timeMs": now})
                self.used += len(cut.encode("utf-8")) + overhead
        self.full = True
        msg = f"logs truncated after {self.used} bytes (the limit maxLogBytes is {self.limit})"
        self.entries.append({"level": "warn", "message": msg, "timeMs": now})
        self.warn("logs_truncated", msg)


class _LogStream(io.TextIOBase):
    """sys.stdout and sys.stderr of a plan: each line is a log entry."""

    def __init__(self, logs, level, enabled):
        self.logs, self.level, self.enabled, self.buf = logs, level, enabled, ""

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        if not self.enabled or self.logs.full:
            return len(s)
        self.buf += s
        while "\n" in self.buf:
            line, self.buf = self.buf.split("\n", 1)
            self.logs.add(self.level, line)
        if len(self.buf) > self.logs.limit:
            self.flush()
        return len(s)

    def flush(self):
        if self.buf:
            line, self.buf = self.buf, ""
            self.logs.add(self.level, line)


class _LogHandler(logging.Handler):
    _levels = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error", logging.CRITICAL: "error"}

    def __init__(self, logs, enabled):
        super().__init__(logging.DEBUG)
        self.logs, self.enabled = logs, enabled

    def emit(self, record):
        if self.enabled:
            self.logs.add(self._levels.get(record.levelno, "info"), self.format(record))


def _alias(name):
    a = re.sub(r"[^0-9A-Za-z_]", "_", name).lower()
    return "_" + a if a[:1].isdigit() else a


class _Run:
    """One plan's run: its budgets, its requests to the server, its trace."""

    def __init__(self, req):
        opts = req.get("options", {})
        lim = opts.get("limits", {})
        self.run_id = opts.get("runId", "")
        self.max_calls = int(lim.get("maxToolCalls") or 0)
        self.max_log = int(lim.get("maxLogBytes") or 0)
        self.max_result = int(lim.get("maxResultBytes") or 0)
        self.console = bool(lim.get("allowConsole"))
        self.timeout = (lim.get("timeout") or 0) / 1e9
        self.stack = int(lim.get("maxStackDepth") or 0)
        self.sem = None
        self.concurrency = max(1, int(lim.get("maxConcurrency") or 1))
        self.context = req.get("context") or {}
        rp = opts.get("replay")
        # Under Replay (a dict: {seed, epochMs}) every call and discovery
        # carries its index, and _Replay makes the run repeatable.
        self.replay = _Replay(int(rp.get("seed") or 0), int(rp.get("epochMs") or 0)) if isinstance(rp, dict) else None
        self.start = _mono()
        self.requests = 0
        self.next_id = 0
        self.pending = {}
        self.trace = []
        self.warnings = []
        self.catalog = None
        self.sync_id, self.sync_reply = None, None
        self.main, self.stop_code = None, None  # the plan's task; the server's stop
        self.logs = _Logs(self.max_log, self.start, self.warn)
        self.clock = _Clock(self.timeout)
        self.buf = bytearray()

    def warn(self, kind, message):
        self.warnings.append({"type": kind, "message": message[:4096]})

    # The server's replies arrive on descriptor 0, read by the event loop
    # (on_readable), or by a synchronous helper waiting for its reply.
    def on_readable(self):
        try:
            chunk = os.read(_IN, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            os._exit(7)
        self._feed(chunk)

    def _feed(self, chunk):
        self.buf += chunk
        while len(self.buf) >= 4:
            (n,) = struct.unpack(">I", self.buf[:4])
            if len(self.buf) < 4 + n:
                break
            m = json.loads(self.buf[4:4 + n])
            del self.buf[:4 + n]
            t, cid = m.get("t"), m.get("id", 0)
            if t == "stop":
                self._stop(m.get("code") or "@canceled")
            elif t == "suspend":
                self.clock.suspend(cid)
            elif t == "resume":
                self.clock.resume(cid)
            elif t == "reply":
                self.clock.resume(cid)
                if cid == self.sync_id:
                    self.sync_reply = m
                    continue
                if self.replay is not None and self.replay.arrive(cid, m):
                    continue  # settled in call order by _ReplaySelector
                fut = self.pending.pop(cid, None)
                if fut is not None and not fut.done():
                    fut.set_result(m)

    def _stop(self, code):
        """The request ended (the client went, its deadline passed, or a
        durable run pauses): the plan stops where it waits, and the run
        sends its result with the logs so far. A plan busy in its own code
        stops at its next await, or is killed by the server."""
        if self.stop_code is not None:
            return
        self.stop_code = code
        if self.sync_id is not None:
            raise self.stopped()  # in a *_sync helper, in the plan's frame
        if self.main is not None:
            self.main.cancel()

    def stopped(self):
        if self.stop_code == "@deadline":
            return _Stop("timeout", {"message": "the run reached the client's deadline for the request"})
        return _Stop("cancelled", {"message": "the run was cancelled by the client"})

    def request_sync(self, msg):
        """One request answered before it returns, for the *_sync
        helpers: it reads descriptor 0 itself until its reply comes,
        settling the replies of calls in flight on the way."""
        if len(self.pending) >= self.concurrency:
            raise RuntimeError(f"a *_sync helper cannot run while {self.concurrency} calls (maxConcurrency) are in flight; await the async helper")
        self.next_id += 1
        cid = self.next_id
        msg["id"] = cid
        self.sync_id, self.sync_reply = cid, None
        _send(msg)
        try:
            while self.sync_reply is None:
                select.select([_IN], [], [])
                try:
                    chunk = os.read(_IN, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    os._exit(7)
                self._feed(chunk)
            return self.sync_reply
        finally:
            self.sync_id = None

    def _charge(self, msg):
        """Counts a call or discovery against maxToolCalls; under Replay
        msg carries its index, the order the plan made it in (as the Go
        worker gives vm.CallIndex)."""
        if self.requests >= self.max_calls:
            raise _Stop("limit_exceeded", {"limit": "maxToolCalls",
                                           "message": f"the plan made more than {self.max_calls} tool calls, this preset's maxToolCalls"})
        if self.replay is not None:
            msg["index"] = self.requests
        self.requests += 1
        return msg

    async def request(self, msg):
        if self.sem is None:
            self.sem = asyncio.Semaphore(self.concurrency)
        async with self.sem:
            self.next_id += 1
            cid = self.next_id
            fut = asyncio.get_running_loop().create_future()
            self.pending[cid] = fut
            msg["id"] = cid
            if self.replay is not None:
                self.replay.sending(msg["index"], cid)
            _send(msg)
            try:
                return await fut
            except asyncio.CancelledError:
                answered = self.replay is not None and self.replay.forget(cid)
                if self.pending.pop(cid, None) is not None and not answered:
                    _send({"t": "cancel", "id": cid})
                raise

    async def call_tool(self, name, input=None):
        if not isinstance(name, str) or not name or len(name.encode("utf-8", "replace")) > _MAX_NAME:
            raise TypeError("call_tool(name, input): name must be a tool name such as 'crm.find_contacts'")
        if input is None:
            input = {}
        if not isinstance(input, dict):
            raise TypeError(f"call_tool({name!r}, input): input must be a dict of the tool's arguments, not {type(input).__name__}")
        try:
            raw = json.dumps(input, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError(f"call_tool({name!r}, input): the input is not JSON-serialisable: {e}") from None
        msg = self._charge({"t": "call", "name": name, "input": json.loads(raw)})
        entry = {"toolName": name, "durationMs": 0, "ok": False, "error": "CANCELLED"}
        self.trace.append(entry)
        began = _mono()
        try:
            m = await self.request(msg)
        except asyncio.CancelledError:
            raise
        entry["durationMs"] = round((_mono() - began) * 1000, 3)
        if m.get("ok"):
            entry["ok"], entry["error"] = True, ""
            entry.pop("error")
            v = m.get("value")
            return v
        code = m.get("code", "")
        if code in ("@deadline", "@canceled"):
            entry["error"] = "TIMEOUT"
            raise _Stop("timeout", {"message": f"the run exceeded its timeout of {_dur(self.timeout)}"})
        entry["error"] = code or "EXECUTION"
        err = ToolError(code or "EXECUTION", m.get("error", "the tool call failed"), m.get("hint", ""), m.get("reason", ""),
                        bool(m.get("retry")), name)
        err.input_json = raw
        raise err

    async def discover(self, op, args):
        return self._discovered(op, await self.request(self._charge({"t": "discover", "name": op, "input": args})))

    def discover_sync(self, op, args):
        return self._discovered(op, self.request_sync(self._charge({"t": "discover", "name": op, "input": args})))

    def _discovered(self, op, m):
        if m.get("ok"):
            return m.get("value")
        raise ToolError(m.get("code") or "EXECUTION", m.get("error", "the discovery request failed"), m.get("hint", ""),
                        m.get("reason", ""), False, op)

    async def tools(self):
        if self.catalog is None:
            self.catalog = await self.discover("catalog", {}) or []
        return self.catalog

    def tools_sync(self):
        if self.catalog is None:
            self.catalog = self.discover_sync("catalog", {}) or []
        return self.catalog


class _Server:
    """mcp_<alias>: one app's (or upstream's) tools as async methods,
    mcp_crm.find_contacts(query="ada") for call_tool("crm.find_contacts",
    {"query": "ada"})."""

    def __init__(self, run, app, tools):
        object.__setattr__(self, "_run", run)
        object.__setattr__(self, "_app", app)
        object.__setattr__(self, "_tools", tools)

    def __getattr__(self, attr):
        name = self._tools.get(attr)
        if name is None:
            raise AttributeError(f"mcp_{_alias(self._app)} has no tool {attr!r}; its tools: {', '.join(sorted(self._tools)) or 'none'}")
        run = self._run

        async def tool(**input):
            return await run.call_tool(name, input)

        tool.__name__ = attr
        return tool

    def __dir__(self):
        return sorted(self._tools)

    def __repr__(self):
        return f"<mcp_{_alias(self._app)}: {len(self._tools)} tools>"


def _servers(catalog):
    """{app id: {python name: tool name}} of the tools the plan may call."""
    out = {}
    for t in catalog:
        app = t.get("appId") or t["name"].split(".", 1)[0]
        short = t["name"][len(app) + 1:] if t["name"].startswith(app + ".") else t["name"]
        out.setdefault(app, {}).setdefault(_alias(short), t["name"])
    return out


def _app_of(t):
    return t.get("appId") or t["name"].split(".", 1)[0]


def _tools_of(catalog, server):
    tools = [t for t in catalog if _app_of(t) == server]
    if not tools:
        raise ToolError("SERVER_NOT_FOUND", f"no server {server!r} among {', '.join(sorted(_servers(catalog)))}",
                        "list_servers() lists the servers this plan may use.")
    short = {v: k for k, v in _servers(catalog)[server].items()}
    return [{"name": t["name"], "alias": short.get(t["name"], ""), "description": t.get("description", "")} for t in tools]


def _doc_names(catalog, server, tool):
    names = [t["name"] for t in _tools_of(catalog, server) if tool is None or tool in (t["name"], t["alias"])]
    if not names:
        raise ToolError("NOT_FOUND", f"server {server!r} has no tool {tool!r}", f"list_tools({server!r}) lists its tools.")
    return {"names": names[:256]}


def _docs(docs, detail):
    if detail == "full":
        return docs
    return [{"name": d.get("name"), "description": d.get("description", "")} for d in (docs or {}).get("tools", [])]


def _search_args(query, limit):
    if not isinstance(query, str) or not query.strip():
        raise TypeError("search_tool_docs(query, limit=5): query must be a non-empty string")
    return {"query": query, "topK": int(limit)}


def _server_info(catalog, name):
    tools = _tools_of(catalog, name)
    return {"name": name, "alias": "mcp_" + _alias(name), "toolCount": len(tools), "tools": [t["name"] for t in tools]}


def _summary(catalog):
    servers = _servers(catalog)
    parts = [f"{app} (mcp_{_alias(app)}): {len(tools)} tools" for app, tools in sorted(servers.items())]
    return f"{len(servers)} servers, {sum(len(t) for t in servers.values())} tools. " + "; ".join(parts)


def _helpers(run):
    """The plan's API: call_tool, ToolError, the discovery helpers (async,
    and *_sync variants that answer before they return)."""

    async def list_servers():
        return sorted(_servers(await run.tools()))

    async def list_tools(server):
        return _tools_of(await run.tools(), server)

    async def query_tool_docs(server, tool=None, detail="summary"):
        return _docs(await run.discover("describe", _doc_names(await run.tools(), server, tool)), detail)

    async def search_tool_docs(query, limit=5):
        return await run.discover("search", _search_args(query, limit))

    async def describe_server(name):
        return _server_info(await run.tools(), name)

    async def capability_summary():
        return _summary(await run.tools())

    def list_servers_sync():
        return sorted(_servers(run.tools_sync()))

    def list_tools_sync(server):
        return _tools_of(run.tools_sync(), server)

    def query_tool_docs_sync(server, tool=None, detail="summary"):
        return _docs(run.discover_sync("describe", _doc_names(run.tools_sync(), server, tool)), detail)

    def search_tool_docs_sync(query, limit=5):
        return run.discover_sync("search", _search_args(query, limit))

    def discovered_servers():
        return tuple(sorted(_servers(run.tools_sync())))

    def list_loaded_server_metadata():
        catalog = run.tools_sync()
        return [{k: v for k, v in _server_info(catalog, app).items() if k != "tools"} for app in sorted(_servers(catalog))]

    return {
        "call_tool": run.call_tool, "ToolError": ToolError, "codecall_context": run.context,
        "list_servers": list_servers, "list_tools": list_tools, "query_tool_docs": query_tool_docs,
        "search_tool_docs": search_tool_docs, "describe_server": describe_server,
        "capability_summary": capability_summary, "discovered_servers": discovered_servers,
        "list_servers_sync": list_servers_sync, "list_tools_sync": list_tools_sync,
        "query_tool_docs_sync": query_tool_docs_sync, "search_tool_docs_sync": search_tool_docs_sync,
        "list_loaded_server_metadata": list_loaded_server_metadata,
    }


_PROXY_NAMES = re.compile(r"\bmcp_\w+")


def _location(tb):
    """The line and column in the plan of the innermost frame in it."""
    loc = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == "<plan>":
            col = None
            try:
                col = list(code.co_positions())[tb.tb_lasti // 2][2]
            except Exception:
                pass
            loc = {"line": tb.tb_lineno, "column": (col or 0) + 1}
        tb = tb.tb_next
    return loc


def _limit(limit, message):
    return _Stop("limit_exceeded", {"limit": limit, "message": message})


def _export(run, value):
    """The result as JSON within maxResultBytes: a larger one becomes the
    {truncated, preview, bytes} marker, as in JavaScript."""
    try:
        b = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8", "replace")
    except (TypeError, ValueError, RecursionError) as e:
        raise _Stop("runtime_error", {"source": "script", "name": "TypeError",
                                      "message": f"the value of `result` is not JSON-serialisable: {e}; "
                                                 "set result to dicts, lists, strings, numbers, booleans and None"}) from None
    if len(b) <= run.max_result:
        return b.decode("utf-8")
    total, n = len(b), len(b)
    while True:
        preview = b[:n].decode("utf-8", "ignore")
        m = json.dumps({"truncated": True, "preview": preview, "bytes": total}, ensure_ascii=False, separators=(",", ":"))
        if len(m.encode("utf-8")) <= run.max_result or n == 0:
            run.warn("result_truncated", f"the result was {total} bytes, over maxResultBytes ({run.max_result}); it was replaced by a preview")
            return m
        n = n * 3 // 4
        if n < 16:
            n = 0


def _finish(run, status, result=None, error=None):
    run.clock.stop()
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    res = {"status": status, "toolTrace": run.trace[:run.max_calls], "runId": run.run_id,
           "metrics": {"durationMs": round((_mono() - run.start) * 1000, 3), "toolCalls": len(run.trace)}}
    if result is not None:
        res["result"] = json.loads(result)
    if error is not None:
        for k in ("message", "hint", "reason", "name"):
            if k in error and isinstance(error[k], str):
                error[k] = error[k][:8192]
        res["error"] = error
    if run.logs.entries:
        res["logs"] = run.logs.entries
    if run.warnings:
        res["warnings"] = run.warnings[:8]
    _send({"t": "result", "result": res})
    os._exit(0)


async def _main(run, code, g):
    run.clock.start()
    if _PROXY_NAMES.search(run.source):
        servers = _servers(await run.tools())
        for app, tools in servers.items():
            g.setdefault("mcp_" + _alias(app), _Server(run, app, tools))
        g["mcp_servers"] = {app: g["mcp_" + _alias(app)] for app in servers}
    r = eval(code, g)
    if asyncio.iscoroutine(r):
        await r


def _outcome(run, e):
    """The status and error of a plan that raised e."""
    if isinstance(e, _Stop):
        return e.status, e.error
    if isinstance(e, ToolError):
        err = {"source": "tool", "toolName": e.tool, "name": "ToolError", "code": e.code, "message": e.message}
        if e.hint:
            err["hint"] = e.hint
        if e.reason:
            err["reason"] = e.reason
        if e.retryable:
            err["retryable"] = True
        echo = getattr(e, "input_json", None)
        if echo is not None:
            err["toolInput"] = json.loads(echo) if len(echo) <= _INPUT_ECHO else {"truncated": True, "bytes": len(echo)}
        return "tool_error", err
    if isinstance(e, MemoryError):
        return "limit_exceeded", {"limit": "memoryBytes", "message": "the plan ran out of memory (its memoryBytes budget)"}
    if isinstance(e, RecursionError):
        return "limit_exceeded", {"limit": "maxStackDepth", "message": f"the plan's call stack went past maxStackDepth ({run.stack})"}
    err = {"source": "script", "name": type(e).__name__, "message": str(e) or type(e).__name__}
    if isinstance(e, SystemExit):
        err["message"] = "the plan called sys.exit(); set `result` and let the plan end instead"
    loc = _location(e.__traceback__)
    if loc:
        err["location"] = loc
    return "runtime_error", err


def _hash_reexec(req, seed):
    """Executes this bootstrap again with PYTHONHASHSEED set from a
    Replay seed, handing it req on an unnamed file, so that str and bytes
    hash alike on every run of the plan: the order a set of strings
    iterates in depends on them, and the interpreter fixes its hash key
    at start (-I ignores the environment, so this worker's is random).
    It returns, with why, only when it could not: the run goes on with
    random hashes. The process, its confinement and its pipes stay; the
    server sees nothing of it."""
    try:
        argv = sys.orig_argv
        source = argv[argv.index("-c") + 1]
        data = json.dumps(req, separators=(",", ":")).encode("ascii")
        fd = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
        # -P -s and an environment holding nothing else are -I, less its
        # refusal to read PYTHONHASHSEED.
        os.execve(argv[0], [argv[0], "-P", "-s", "-S", "-B", "-X", "utf8", "-c", source, _CONF_ARG, str(fd)],
                  {"PYTHONHASHSEED": str(seed % (1 << 32))})
    except (OSError, ValueError, IndexError) as e:
        return f"{type(e).__name__}: {e}"


def _read_run_fd(fd):
    buf = bytearray()
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buf += chunk
    os.close(fd)
    return json.loads(buf)


def _serve():
    # Warm the interpreter's pages while the worker waits in the pool.
    compile("x = [i * 2 for i in range(3)]\nresult = {'n': len(x)}", "<prewarm>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    unfixed = None
    if _RUN_FD is None:
        _send({"t": "ready", "confinement": _CONFINEMENT})
        first = _read_frame()
        if first.get("t") != "run" or not isinstance(first.get("run"), dict):
            os._exit(5)
        req = first["run"]
        rp = req.get("options", {}).get("replay")
        if isinstance(rp, dict):
            unfixed = _hash_reexec(req, int(rp.get("seed") or 0))
    else:
        req = _read_run_fd(_RUN_FD)
    if unfixed is not None:
        # For the server's log of a worker that fails; the run goes on,
        # and the server's journal catches a plan this makes diverge.
        os.write(2, f"codecall python bootstrap: no fixed hash key for this Replay run: {unfixed[:200]}\n".encode("utf-8", "replace"))
    run = _Run(req)
    run.source = req.get("script", "")
    if run.replay is not None:
        # The warm loop reads the real clock and settles replies as they
        # come; a run under Replay gets one that does neither.
        loop.close()
        loop = _ReplayLoop(run.replay, run)
        asyncio.set_event_loop(loop)
        run.replay.install()
    sys.stdout = _LogStream(run.logs, "log", run.console)
    sys.stderr = _LogStream(run.logs, "error", run.console)
    root = logging.getLogger()
    root.handlers[:] = [_LogHandler(run.logs, run.console)]
    root.setLevel(logging.INFO)
    if run.stack > 0:
        # The plan's frames sit on top of the event loop's and the
        # bootstrap's, some 30 deep.
        sys.setrecursionlimit(run.stack + 64)
    try:
        code = compile(run.source, "<plan>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as e:
        loc = {"line": max(1, e.lineno or 1), "column": max(1, e.offset or 1)}
        _finish(run, "syntax_error", error={"message": f"{type(e).__name__}: {e.msg}", "location": loc})
    except (ValueError, MemoryError, RecursionError) as e:
        _finish(run, "syntax_error", error={"message": f"the plan cannot be compiled: {e}"})
    g = {"__name__": "__main__", "__builtins__": builtins}
    g.update(_helpers(run))
    os.set_blocking(_IN, False)
    loop.add_reader(_IN, run.on_readable)
    main = run.main = loop.create_task(_main(run, code, g))
    status, error, result = "ok", None, None
    try:
        loop.run_until_complete(main)
        run.clock.stop()
        if "result" not in g:
            run.warn("no_result", "the plan set no `result` variable; its result is null")
        result = _export(run, g.get("result"))
    except BaseException as e:
        status, error = _outcome(run, run.stopped() if run.stop_code is not None and not isinstance(e, _Stop) else e)
    run.clock.stop()
    # Calls the plan never awaited are withdrawn, as in JavaScript.
    try:
        for t in asyncio.all_tasks(loop):
            t.cancel()
    except BaseException:
        pass
    _finish(run, status, result, error)


try:
    _serve()
except BaseException as e:  # the bootstrap itself failed: say so on stderr, for the server's log
    try:
        os.write(2, f"codecall python bootstrap: {type(e).__name__}: {e}\n".encode())
    except BaseException:
        pass
    os._exit(9)
