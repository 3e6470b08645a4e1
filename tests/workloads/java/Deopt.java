// Deopt.java: main -> run -> spin -> leaf, compiled by C2 (leaf inlined
// into spin, spin's loop OSR-compiled); a second thread deoptimizes every
// compiled method every 50 ms through the WhiteBox API (see
// jdk/test/whitebox/WhiteBox.java): the frames on the main thread's stack
// return through their nmethods' deopt handlers into the interpreter and
// their methods are compiled again, over and over.
import jdk.test.whitebox.WhiteBox;

public class Deopt {
	static long sink;
	static volatile long deopts;

	static long leaf(long i) {
		return (i * 31) ^ (i >>> 3);
	}

	static long spin(long n) {
		long x = 0;
		for (long i = 0; i < n; i++)
			x += leaf(i + x);
		return x;
	}

	static void run(long end) {
		while (System.nanoTime() < end)
			sink += spin(2000000);
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 30;
		long end = System.nanoTime() + (long)(secs * 1e9);
		WhiteBox wb = new WhiteBox();
		Thread t = new Thread(() -> {
			while (System.nanoTime() < end) {
				try {
					Thread.sleep(50);
				} catch (InterruptedException e) {
					return;
				}
				wb.deoptimizeAll();
				deopts++;
			}
		});

		t.setDaemon(true);
		t.start();
		run(end);
		System.out.println(sink + " " + deopts + " deoptimizations");
	}
}
