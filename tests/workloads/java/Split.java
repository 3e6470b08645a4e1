// Split.java: main -> run -> {heavy, medium, light} -> *Leaf -> work.
// Each round burns 6, 3 and 1 ms of the thread's own CPU time in the
// three chains, times a random factor (0.5 to 1.5) so that the rounds do
// not beat with a CPU-clock sampling period: the expected split is
// 60/30/10 whatever the load.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public class Split {
	static final ThreadMXBean T = ManagementFactory.getThreadMXBean();
	static long sink;

	static long cpu() {
		return T.getCurrentThreadCpuTime();
	}

	static void work() {
		long x = sink;
		for (int i = 0; i < 2000; i++)
			x += ((long)i * i) ^ x;
		sink = x;
	}

	static void heavyLeaf(long until) {
		while (cpu() < until)
			work();
	}

	static void mediumLeaf(long until) {
		while (cpu() < until)
			work();
	}

	static void lightLeaf(long until) {
		while (cpu() < until)
			work();
	}

	static void heavy(long ns) {
		heavyLeaf(cpu() + ns);
	}

	static void medium(long ns) {
		mediumLeaf(cpu() + ns);
	}

	static void light(long ns) {
		lightLeaf(cpu() + ns);
	}

	static void run(long end) {
		java.util.Random rnd = new java.util.Random(1);

		while (System.nanoTime() < end) {
			double f = 0.5 + rnd.nextDouble();

			heavy((long)(6000000 * f));
			medium((long)(3000000 * f));
			light((long)(1000000 * f));
		}
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 30;
		run(System.nanoTime() + (long)(secs * 1e9));
		System.out.println(sink);
	}
}
