// SPDX-License-Identifier: GPL-2.0
/*
 * kqtestmod: kquic's own out-of-tree test module. It registers
 * /proc/kqtestmod, which reads "kqtestmod <value>", so the tests can build
 * a module with `kqbench module build`, load it in the guest and see it run.
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

static int kqtestmod_value = 42;

static int kqtestmod_show(struct seq_file *m, void *v)
{
	seq_printf(m, "kqtestmod %d\n", kqtestmod_value);
	return 0;
}

static int __init kqtestmod_init(void)
{
	if (!proc_create_single("kqtestmod", 0444, NULL, kqtestmod_show))
		return -ENOMEM;
	return 0;
}

static void __exit kqtestmod_exit(void)
{
	remove_proc_entry("kqtestmod", NULL);
}

module_init(kqtestmod_init);
module_exit(kqtestmod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kquic's test module: a proc file");
