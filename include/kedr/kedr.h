/* kedr: a toolkit for scientific computing on GPUs. Include this header for the whole API. */
#ifndef KEDR_H
#define KEDR_H

#include "kedr/adi.h"
#include "kedr/cayley.h"
#include "kedr/comm.h"
#include "kedr/core.h"
#include "kedr/dsmc.h"
#include "kedr/flow.h"
#include "kedr/ini.h"
#include "kedr/plot.h"
#include "kedr/prim.h"
#include "kedr/probe.h"
#include "kedr/render.h"
#include "kedr/rng.h"

#endif
