#!/bin/bash
# Spread a sweep over a cluster as a job array: each array task runs one shard of the runs
# (every N-th run, from its own index on), all into the same dataset directory; together the
# shards are the whole sweep, and a task that is killed and resubmitted resumes.
#
# Slurm:   sbatch --array=0-7 scenarios/sweep-array.sh scenarios/two-switch-sweep.toml
#          (placesim reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT)
# PBS Pro: qsub -J 0-7 -v PLACESIM_SHARDS=8,SWEEP=scenarios/two-switch-sweep.toml scenarios/sweep-array.sh
#          (placesim reads PBS_ARRAY_INDEX, with the shard count in PLACESIM_SHARDS)
#
#SBATCH --job-name=placesim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#PBS -N placesim-sweep
#PBS -l select=1:ncpus=2
#PBS -l walltime=01:00:00
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-${PBS_O_WORKDIR:-.}}"
sweep="${1:-${SWEEP:?give the sweep file as the first argument or in SWEEP}}"
threads="${SLURM_CPUS_PER_TASK:-${NCPUS:-2}}"
exec target/release/placesim sweep "$sweep" --threads "$threads" --resume
