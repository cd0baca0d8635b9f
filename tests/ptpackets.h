/* ptpackets.h - hand-made Intel PT packets with libipt's own encoder, for tests that need
   a few exact packets rather than a synthesised walk (ptsynth.h). Needs intel-pt.h (by
   frames_pt.h) and testutil.h (cmocka) first. */
#ifndef FRAMES_PTPACKETS_H
#define FRAMES_PTPACKETS_H

/* One packet into e (the test fails when it does not fit). */
TU_FN void ptp_put(struct pt_encoder *e, struct pt_packet *p) {
    assert_true(pt_enc_next(e, p) > 0);
}

/* PSB+ that (re)starts decoding at ip in 64-bit mode: PSB, FUP ip, MODE.exec, PSBEND. */
TU_FN void ptp_psb_plus(struct pt_encoder *e, uint64_t ip) {
    struct pt_packet p;
    memset(&p, 0, sizeof p);
    p.type = ppt_psb;
    ptp_put(e, &p);
    p.type = ppt_fup;
    p.payload.ip.ipc = pt_ipc_sext_48;
    p.payload.ip.ip = ip;
    ptp_put(e, &p);
    memset(&p, 0, sizeof p);
    p.type = ppt_mode;
    p.payload.mode.leaf = pt_mol_exec;
    p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
    ptp_put(e, &p);
    memset(&p, 0, sizeof p);
    p.type = ppt_psbend;
    ptp_put(e, &p);
}

#endif
