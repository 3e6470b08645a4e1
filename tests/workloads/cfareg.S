/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Two functions whose CFI keeps the CFA in a register other than rsp and
 * rbp, the way OpenSSL's and ld.so's assembly does.  Both realign the
 * stack, so rsp says nothing about the CFA while they run.
 *
 * spin_in_rax(n): a leaf that spins n rounds with CFA = rax + 8 (OpenSSL's
 *   "mov %rsp,%rax; .cfi_def_cfa_register %rax").  Its value comes from
 *   the sample's registers.
 * call_via_r15(fn, arg): calls fn(arg) with CFA = r15 + 16.  fn saves and
 *   clobbers r15, so unwinding through fn must restore r15 from fn's frame
 *   before call_via_r15's CFA can be computed.
 */
	.text
	.globl	spin_in_rax
	.type	spin_in_rax, @function
spin_in_rax:
	.cfi_startproc
	mov	%rsp, %rax
	.cfi_def_cfa_register %rax
	push	%rbx
	.cfi_offset %rbx, -16
	and	$-64, %rsp
	sub	$128, %rsp
	mov	%rdi, %rcx
	xor	%ebx, %ebx
1:	imul	$1103515245, %rbx, %rdx
	add	%rcx, %rdx
	xor	%rdx, %rbx
	mov	%rbx, 8(%rsp)
	dec	%rcx
	jnz	1b
	mov	-8(%rax), %rbx
	mov	%rax, %rsp
	.cfi_def_cfa_register %rsp
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	spin_in_rax, .-spin_in_rax

	.globl	call_via_r15
	.type	call_via_r15, @function
call_via_r15:
	.cfi_startproc
	push	%r15
	.cfi_def_cfa_offset 16
	.cfi_offset %r15, -16
	mov	%rsp, %r15
	.cfi_def_cfa_register %r15
	and	$-64, %rsp
	sub	$64, %rsp
	mov	%rdi, %rax
	mov	%rsi, %rdi
	call	*%rax
	mov	%r15, %rsp
	.cfi_def_cfa_register %rsp
	pop	%r15
	.cfi_def_cfa_offset 8
	.cfi_restore %r15
	ret
	.cfi_endproc
	.size	call_via_r15, .-call_via_r15

	.section .note.GNU-stack,"",@progbits
