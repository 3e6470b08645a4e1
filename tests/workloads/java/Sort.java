// Sort.java: main -> sortAll -> Arrays.sort with a Java comparator, a
// nested class (Sort$ByWeight.compare) on even rounds and a lambda on odd
// ones, each comparison burning a little CPU so the comparators hold
// the samples.
import java.util.Arrays;
import java.util.Comparator;

public class Sort {
	static long sink;

	static long weight(Integer v) {
		long x = v;
		for (int i = 0; i < 200; i++)
			x = x * 31 + i;
		sink += x;
		return v;
	}

	static class ByWeight implements Comparator<Integer> {
		public int compare(Integer a, Integer b) {
			return Long.compare(weight(a), weight(b));
		}
	}

	static void sortAll(Integer[] data, boolean lambda) {
		if (lambda)
			Arrays.sort(data, (a, b) -> Long.compare(weight(b), weight(a)));
		else
			Arrays.sort(data, new ByWeight());
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 30;
		long end = System.nanoTime() + (long)(secs * 1e9);
		java.util.Random rnd = new java.util.Random(7);
		Integer[] data = new Integer[2000];

		for (int round = 0; System.nanoTime() < end; round++) {
			for (int i = 0; i < data.length; i++)
				data[i] = rnd.nextInt();
			sortAll(data, (round & 1) == 1);
		}
		System.out.println(sink);
	}
}
