# SPDX-License-Identifier: Apache-2.0
# deep.py: a known stack, leaf first:
#   burn <- c <- b <- a <- K.meth <- <lambda> <- [sorted, C] <- viac <- <module>
# The sorted(key=...) call re-enters the interpreter from C, so the stack
# holds two eval-loop invocations (entry frames, shim frames).
#
#   python deep.py [SECONDS] [--poke]
#
# With --poke a helper thread prints "ready PID IDENT NATIVE_ID" (IDENT is
# threading.get_ident() of the main thread, i.e. pthread_self()), then
# answers each "dump" line on stdin with the main thread's frames as
# Python itself sees them, innermost first:
#   frame CODE_ID FIRSTLINE LINE NAME FILE
#   end
# CODE_ID is id(code object), its address.  NAME is co_qualname (3.11+)
# or co_name.  The helper's own ident follows "ready" as "helper IDENT".
import sys, threading, time

def burn(deadline):
    x = 0
    while time.time() < deadline:
        for i in range(10000):
            x += i * i
    return x

def c(deadline): return burn(deadline)

def b(deadline): return c(deadline)

def a(deadline): return b(deadline)

class K:
    def meth(self, deadline): return a(deadline)

def viac(deadline):
    return sorted([0], key=lambda _: K().meth(deadline))

def dump(ident):
    frame = sys._current_frames().get(ident)
    while frame is not None:
        code = frame.f_code
        name = getattr(code, "co_qualname", code.co_name)
        print("frame", id(code), code.co_firstlineno, frame.f_lineno, name,
              code.co_filename)
        frame = frame.f_back
    print("end", flush=True)

def poke_loop(ident):
    for line in sys.stdin:
        if line.strip() == "dump":
            dump(ident)

def start_poke():
    ident = threading.get_ident()
    native = getattr(threading, "get_native_id", lambda: 0)()
    t = threading.Thread(target=poke_loop, args=(ident,), daemon=True)
    t.start()
    print("ready", __import__("os").getpid(), ident, native)
    print("helper", t.ident, flush=True)

if __name__ == "__main__":
    args = [x for x in sys.argv[1:] if not x.startswith("--")]
    secs = float(args[0]) if args else 30
    if "--poke" in sys.argv:
        start_poke()
    viac(time.time() + secs)
