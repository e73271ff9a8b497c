/*
 * gen-higgs - deterministic HIGGS-like CSV for benchmarks and accuracy runs.
 *
 *   gen-higgs ROWS [SEED] > data.csv
 *
 * 28 float features named as in the HIGGS data set (21 low-level kinematic
 * columns: lepton, missing energy, four jets with pT, eta, phi and b-tag;
 * 7 invariant-mass-like columns computed from them) and a 0/1 label, last.
 * The label is 1[g(x) + N(0, 0.75^2) > 0.9] for a nonlinear g (a bump in
 * m_bb, b-tag count, tanh of m_wwbb, lepton eta and angle terms), so a
 * linear model stays well below a small MLP and the noise caps every model
 * near 0.82 accuracy.  Values are printed with 6 decimals (~255 bytes a
 * row).  The same ROWS and SEED give the same bytes on every machine
 * (the random numbers come from libtfcore's tf_rng).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf/rng.h"

static struct tf_rng rng;

static double
uniform(void)
{
	return tf_rng_uniform(&rng);
}

static double
gauss(void)
{
	return tf_rng_normal(&rng);
}

static double
lognorm(double mu, double sigma)
{
	return exp(mu + sigma * gauss());
}

static double
eta(void)
{
	double e = gauss();
	return e < -2.4 ? -2.4 : e > 2.4 ? 2.4 : e;
}

struct obj {
	double pt, eta, phi;
};

/* Invariant mass of massless objects, scaled to sit around 1. */
static double
mass(const struct obj *o, int n)
{
	double m2 = 0;
	for (int i = 0; i < n; i++) {
		for (int j = i + 1; j < n; j++) {
			m2 += 2.0 * o[i].pt * o[j].pt *
			      (cosh(o[i].eta - o[j].eta) -
			       cos(o[i].phi - o[j].phi));
		}
	}
	return 0.5 * sqrt(m2);
}

/* Fixed 6-decimal text of v into p; returns the end. */
static char *
put6(char *p, double v)
{
	long long q = llround(v * 1e6);
	if (q < 0) {
		*p++ = '-';
		q = -q;
	}
	char tmp[32];
	int n = 0;
	long long ip = q / 1000000, fp = q % 1000000;
	do {
		tmp[n++] = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip > 0);
	while (n > 0) {
		*p++ = tmp[--n];
	}
	*p++ = '.';
	for (int d = 100000; d > 0; d /= 10) {
		*p++ = (char)('0' + (fp / d) % 10);
	}
	return p;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: gen-higgs ROWS [SEED]\n");
		return 64;
	}
	long long rows = atoll(argv[1]);
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	tf_rng_seed(&rng, seed);
	static const double btag[3] = {0.0, 1.086538, 2.173076};
	static char buf[1 << 16];
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	fputs("lepton_pT,lepton_eta,lepton_phi,missing_energy_magnitude,"
	      "missing_energy_phi,jet1_pt,jet1_eta,jet1_phi,jet1_btag,jet2_pt,"
	      "jet2_eta,jet2_phi,jet2_btag,jet3_pt,jet3_eta,jet3_phi,jet3_btag,"
	      "jet4_pt,jet4_eta,jet4_phi,jet4_btag,m_jj,m_jjj,m_lv,m_jlv,m_bb,"
	      "m_wbb,m_wwbb,label\n",
	      stdout);
	for (long long r = 0; r < rows; r++) {
		struct obj lep = {lognorm(-0.1, 0.5), eta(),
		                  (uniform() * 2 - 1) * M_PI};
		struct obj met = {lognorm(-0.1, 0.6), 0.0,
		                  (uniform() * 2 - 1) * M_PI};
		struct obj jet[4];
		double bt[4];
		int nb = 0;
		for (int j = 0; j < 4; j++) {
			jet[j].pt = lognorm(-0.1, 0.55);
			jet[j].eta = eta();
			jet[j].phi = (uniform() * 2 - 1) * M_PI;
			double u = uniform();
			bt[j] = btag[u < 0.5 ? 0 : u < 0.7 ? 1 : 2];
			nb += bt[j] > 0;
		}
		struct obj all[6] = {jet[0], jet[1], jet[2], jet[3], lep, met};
		struct obj jlv[3] = {jet[0], lep, met};
		struct obj lv[2] = {lep, met};
		double m_jj = mass(jet, 2), m_jjj = mass(jet, 3);
		double m_lv = mass(lv, 2), m_jlv = mass(jlv, 3);
		double m_bb = mass(jet + 2, 2), m_wbb = mass(jet, 4);
		double m_wwbb = mass(all, 6);
		double g = 2.0 * exp(-pow((m_bb - 0.8) / 0.3, 2)) +
		           0.5 * (nb - 2) + 0.8 * tanh(2.0 * (m_wwbb - 2.5)) -
		           0.35 * lep.eta * lep.eta +
		           0.6 * cos(lep.phi - met.phi) +
		           0.4 * log(lep.pt * met.pt + 1e-9);
		int y = g + 0.75 * gauss() > 0.9;
		double f[28] = {lep.pt, lep.eta, lep.phi, met.pt, met.phi};
		int k = 5;
		for (int j = 0; j < 4; j++) {
			f[k++] = jet[j].pt;
			f[k++] = jet[j].eta;
			f[k++] = jet[j].phi;
			f[k++] = bt[j];
		}
		double m[7] = {m_jj, m_jjj, m_lv, m_jlv, m_bb, m_wbb, m_wwbb};
		memcpy(f + k, m, sizeof m);
		char *p = buf;
		for (int i = 0; i < 28; i++) {
			p = put6(p, f[i]);
			*p++ = ',';
		}
		*p++ = (char)('0' + y);
		*p++ = '\n';
		fwrite(buf, 1, (size_t)(p - buf), stdout);
	}
	return fflush(stdout) != 0;
}
