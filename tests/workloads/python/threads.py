# One busy thread behind many others: the thread state list is newest
# first, so the busy thread's state is found after the 40 sleepers' (the
# BPF scan looks at up to 64).  argv[1]: seconds to run.
import sys
import threading
import time


def spin(until):
    n = 0
    while time.time() < until:
        n += sum(range(200))
    return n


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    until = time.time() + secs
    busy = threading.Thread(target=spin, args=(until,))
    busy.start()
    stop = threading.Event()
    for _ in range(40):
        threading.Thread(target=stop.wait, daemon=True).start()
    busy.join()
    stop.set()


main()
