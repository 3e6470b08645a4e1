// SPDX-License-Identifier: Apache-2.0
// JvmReady: runs tests/workloads/java/Split.java in the arm64 guests
// (run-matrix.sh, EP_ARM64_JVM=1) once the JVM is up.  Under TCG the
// JVM's own start (class loading, Split's class initialisation, which
// builds the ThreadMXBean) lasts many seconds, and its main thread has no
// Split.main frame then: check.sh starts the profiler only after the line
// this prints, as it does after pyburn.py's.
public class JvmReady {
	public static void main(String[] args) throws Exception {
		Class.forName("Split"); // its static initialiser runs here
		System.out.println("jvm: running");
		System.out.flush();
		Split.main(args);
	}
}
