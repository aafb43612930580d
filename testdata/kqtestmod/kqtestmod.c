// SPDX-License-Identifier: GPL-2.0
/*
 * kqtestmod: kquic's own out-of-tree test module. It registers
 * /proc/kqtestmod, which reads "kqtestmod <value> <packets>", so the tests
 * can build a module with `kqbench module build`, load it in the guest and
 * see it run; and a netfilter hook on every network namespace's outgoing
 * IPv4 and IPv6 packets, which counts them and spends cost_ns_per_kb
 * nanoseconds of busy CPU per KiB of each, so a test can plant a commit that
 * slows what kqbench measures (a bisection's test: the cost is 0 here).
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

static int kqtestmod_value = 42;

static unsigned int cost_ns_per_kb = 0;
module_param(cost_ns_per_kb, uint, 0644);
MODULE_PARM_DESC(cost_ns_per_kb, "busy nanoseconds spent per KiB of each outgoing packet");

static atomic64_t kqtestmod_packets = ATOMIC64_INIT(0);

static unsigned int kqtestmod_hook(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	u64 cost = (u64)READ_ONCE(cost_ns_per_kb) * DIV_ROUND_UP(skb->len, 1024);

	atomic64_inc(&kqtestmod_packets);
	while (cost) {	/* ndelay takes up to 20 us at a time */
		unsigned int ns = min_t(u64, cost, 20000);

		ndelay(ns);
		cost -= ns;
	}
	return NF_ACCEPT;
}

static const struct nf_hook_ops kqtestmod_ops = {
	.hook		= kqtestmod_hook,
	.pf		= NFPROTO_INET,
	.hooknum	= NF_INET_LOCAL_OUT,
	.priority	= INT_MAX,
};

static int __net_init kqtestmod_net_init(struct net *net)
{
	return nf_register_net_hook(net, &kqtestmod_ops);
}

static void __net_exit kqtestmod_net_exit(struct net *net)
{
	nf_unregister_net_hook(net, &kqtestmod_ops);
}

static struct pernet_operations kqtestmod_net_ops = {
	.init = kqtestmod_net_init,
	.exit = kqtestmod_net_exit,
};

static int kqtestmod_show(struct seq_file *m, void *v)
{
	seq_printf(m, "kqtestmod %d %lld\n", kqtestmod_value,
		   (long long)atomic64_read(&kqtestmod_packets));
	return 0;
}

static int __init kqtestmod_init(void)
{
	int err;

	if (!proc_create_single("kqtestmod", 0444, NULL, kqtestmod_show))
		return -ENOMEM;
	err = register_pernet_subsys(&kqtestmod_net_ops);
	if (err)
		remove_proc_entry("kqtestmod", NULL);
	return err;
}

static void __exit kqtestmod_exit(void)
{
	unregister_pernet_subsys(&kqtestmod_net_ops);
	remove_proc_entry("kqtestmod", NULL);
}

module_init(kqtestmod_init);
module_exit(kqtestmod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kquic's test module: a proc file, and a netfilter hook that can cost CPU");
