// WhiteBox.java: the one method Deopt.java needs of the JVM's test
// interface, which the JVM binds to this class when it is started with
// -XX:+UnlockDiagnosticVMOptions -XX:+WhiteBoxAPI and the class is on the
// boot class path (-Xbootclasspath/a).  The JVM warns about the methods
// of its table this class leaves out (-XX:-PrintWarnings hides that).
package jdk.test.whitebox;

public class WhiteBox {
	private static native void registerNatives();

	static {
		registerNatives();
	}

	// Mark every compiled method for deoptimization and deoptimize
	// their frames on every thread's stack.
	public native void deoptimizeAll();
}
