// Slurm as rdsweep's engine (--slurm): the points to encode become job arrays submitted with sbatch, one task per
// point, each task running `rdsweep --run-point` (which marks its point complete in the shared results folder);
// rdsweep then waits with squeue and collects. Slurm's own tools only: no scheduler or daemon of ours.
//
// A job array has one resource request for all its tasks, so the points are split by what they need: the points
// that run the GPU search (GPUIntegerME != 0) go into an array that asks --gres=gpu:N, the others (the anchor
// runs) into one that asks no GPU. Arrays are cut at kSlurmMaxArray tasks (Slurm's default MaxArraySize is 1001).
// Every submitted task is recorded in OUT/.slurm/submitted.tsv, so a rerun neither submits a point whose task is
// still queued or running nor loses track of it.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rd/rdsweep_options.h"
#include "rd/rdsweep_plan.h"

namespace gme {

constexpr size_t kSlurmMaxArray = 1000;

struct SlurmArray {
  bool gpu = false;
  std::vector<const SweepPoint*> points;  // task i encodes points[i]
  std::string name;                       // file name stem: rdsweep-gpu-1, rdsweep-cpu-1, ...
  std::string script;                     // the batch script
  std::string job_id;                     // set by submit_slurm_array
};

// The arrays for `todo`; `rdsweep` is the absolute path of the program the tasks run.
std::vector<SlurmArray> plan_slurm_arrays(const std::vector<const SweepPoint*>& todo, const SweepOptions& o,
                                          const std::string& rdsweep);

// OUT/.slurm, where the scripts, the tasks' output (JOBID_TASK.out) and submitted.tsv live.
std::string slurm_dir(const SweepOptions& o);

// The sbatch command line for a script at `script_path`.
std::vector<std::string> sbatch_command(const SweepOptions& o, const std::string& script_path);

// Writes the script and submits it (sbatch --parsable); records the tasks. False with *error (sbatch's message).
bool submit_slurm_array(SlurmArray* a, const SweepOptions& o, std::string* error);

// Point id -> "JOBID_TASK" of its latest submission (from submitted.tsv).
std::map<std::string, std::string> slurm_submissions(const SweepOptions& o);

// The user's array tasks and jobs that squeue still lists ("12_3", and "12" for a job as a whole). False with
// *error when squeue fails.
bool slurm_active_tasks(std::set<std::string>* active, std::string* error);

// Runs a program (no shell), returns its exit status (or -1 when it could not start), stdout and stderr.
int run_program(const std::vector<std::string>& argv, std::string* out, std::string* err);

}  // namespace gme
