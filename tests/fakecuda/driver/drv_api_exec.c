/* Driver entry points: modules, libraries, kernel launches and a minimal
 * graph API (kernel nodes only, executed in insertion order on one stream). */
#include "drv.h"

#include <stdlib.h>

static CUresult with_ctx(void)
{
	struct CUctx_st *ctx;
	return fc_ctx_require(&ctx);
}

FC_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	FC_API(cuModuleLoadData);
	CUresult r = with_ctx();
	if (r == CUDA_SUCCESS && !module)
		r = CUDA_ERROR_INVALID_VALUE;
	FC_RETURN(r != CUDA_SUCCESS ? r : fc_module_load(image, module));
}

FC_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	FC_API(cuModuleUnload);
	CUresult r = with_ctx();
	FC_RETURN(r != CUDA_SUCCESS ? r : fc_module_unload(hmod));
}

FC_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	FC_API(cuModuleGetFunction);
	CUresult r = with_ctx();
	FC_RETURN(r != CUDA_SUCCESS ? r : fc_module_get_function(hmod, name, hfunc));
}

/* Libraries are context-independent: no current context needed. */
FC_EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
					     CUjit_option *jitOptions, void **jitOptionsValues,
					     unsigned int numJitOptions,
					     CUlibraryOption *libraryOptions,
					     void **libraryOptionValues,
					     unsigned int numLibraryOptions)
{
	FC_API(cuLibraryLoadData);
	(void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
	(void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	if (!library)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	FC_RETURN(fc_library_load(code, library));
}

FC_EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	FC_API(cuLibraryUnload);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	FC_RETURN(fc_library_unload(library));
}

FC_EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
					      const char *name)
{
	FC_API(cuLibraryGetKernel);
	if (!fc_initialized())
		FC_RETURN(CUDA_ERROR_NOT_INITIALIZED);
	FC_RETURN(fc_library_get_kernel(library, name, pKernel));
}

FC_EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	FC_API(cuKernelGetFunction);
	CUresult r = with_ctx();
	FC_RETURN(r != CUDA_SUCCESS ? r : fc_kernel_get_function(kernel, pFunc));
}

FC_EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
	FC_API(cuFuncGetName);
	struct CUfunc_st *f = fc_function_from_handle(hfunc);
	if (!name)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	if (!f)
		FC_RETURN(CUDA_ERROR_INVALID_HANDLE);
	*name = f->name;
	FC_RETURN(CUDA_SUCCESS);
}

/* ---- launches ------------------------------------------------------------ */

static const char *symbol_of(CUfunction f)
{
	struct CUfunc_st *fn = fc_function_from_handle(f);
	return fn ? fn->name : NULL;
}

static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		       unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
		       CUstream h, int ptsz)
{
	struct fc_launch l = {
	    .func = fc_function_from_handle(f),
	    .grid = {gx, gy, gz},
	    .block = {bx, by, bz},
	    .shared = shared,
	};
	return fc_submit_kernel(h, ptsz, &l);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
					  unsigned int gridDimY, unsigned int gridDimZ,
					  unsigned int blockDimX, unsigned int blockDimY,
					  unsigned int blockDimZ, unsigned int sharedMemBytes,
					  CUstream hStream, void **kernelParams, void **extra)
{
	FC_API_SYM(cuLaunchKernel, symbol_of(f));
	(void)kernelParams, (void)extra; /* device code is never run */
	FC_RETURN(launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			 sharedMemBytes, hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
					       unsigned int gridDimY, unsigned int gridDimZ,
					       unsigned int blockDimX, unsigned int blockDimY,
					       unsigned int blockDimZ, unsigned int sharedMemBytes,
					       CUstream hStream, void **kernelParams, void **extra)
{
	FC_API_SYM(cuLaunchKernel_ptsz, symbol_of(f));
	(void)kernelParams, (void)extra;
	FC_RETURN(launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
			 sharedMemBytes, hStream, 1));
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, int ptsz)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->sharedMemBytes, c->hStream, ptsz);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
					    void **kernelParams, void **extra)
{
	FC_API_SYM(cuLaunchKernelEx, symbol_of(f));
	(void)kernelParams, (void)extra;
	FC_RETURN(launch_ex(config, f, 0));
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
						 void **kernelParams, void **extra)
{
	FC_API_SYM(cuLaunchKernelEx_ptsz, symbol_of(f));
	(void)kernelParams, (void)extra;
	FC_RETURN(launch_ex(config, f, 1));
}

/* ---- graphs: kernel nodes only ------------------------------------------- */

struct CUgraphNode_st {
	struct fc_launch launch;
	struct CUgraphNode_st *next;
};
struct CUgraph_st {
	struct CUgraphNode_st *head, **tail;
};
struct CUgraphExec_st {
	struct fc_launch *launches;
	size_t n;
};

FC_EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	FC_API(cuGraphCreate);
	CUresult r = with_ctx();
	if (r == CUDA_SUCCESS && (!phGraph || flags != 0))
		r = CUDA_ERROR_INVALID_VALUE;
	struct CUgraph_st *g = r == CUDA_SUCCESS ? calloc(1, sizeof(*g)) : NULL;
	if (r == CUDA_SUCCESS && !g)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (g) {
		g->tail = &g->head;
		*phGraph = g;
	}
	FC_RETURN(r);
}

FC_EXPORT CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
						   const CUgraphNode *dependencies,
						   size_t numDependencies,
						   const CUDA_KERNEL_NODE_PARAMS *p)
{
	FC_API(cuGraphAddKernelNode_v2);
	/* Dependencies already exist, so insertion order is a topological order. */
	(void)dependencies, (void)numDependencies;
	if (!phGraphNode || !hGraph || !p)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	struct CUfunc_st *f = fc_function_from_handle(p->func ? (void *)p->func : (void *)p->kern);
	if (!f)
		FC_RETURN(CUDA_ERROR_INVALID_HANDLE);
	struct CUgraphNode_st *n = calloc(1, sizeof(*n));
	if (!n)
		FC_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	n->launch = (struct fc_launch){
	    .func = f,
	    .grid = {p->gridDimX, p->gridDimY, p->gridDimZ},
	    .block = {p->blockDimX, p->blockDimY, p->blockDimZ},
	    .shared = p->sharedMemBytes,
	};
	*hGraph->tail = n;
	hGraph->tail = &n->next;
	*phGraphNode = n;
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
						       unsigned long long flags)
{
	FC_API(cuGraphInstantiateWithFlags);
	(void)flags;
	if (!phGraphExec || !hGraph)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	struct CUgraphExec_st *e = calloc(1, sizeof(*e));
	size_t n = 0;
	for (struct CUgraphNode_st *x = hGraph->head; x; x = x->next)
		n++;
	struct fc_launch *ls = n ? calloc(n, sizeof(*ls)) : NULL;
	if (!e || (n && !ls)) {
		free(e);
		free(ls);
		FC_RETURN(CUDA_ERROR_OUT_OF_MEMORY);
	}
	size_t i = 0;
	for (struct CUgraphNode_st *x = hGraph->head; x; x = x->next)
		ls[i++] = x->launch;
	e->launches = ls;
	e->n = n;
	*phGraphExec = e;
	FC_RETURN(CUDA_SUCCESS);
}

static CUresult graph_launch(CUgraphExec e, CUstream h, int ptsz)
{
	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < e->n; i++) {
		CUresult r = fc_submit_kernel(h, ptsz, &e->launches[i]);
		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	FC_API(cuGraphLaunch);
	FC_RETURN(graph_launch(hGraphExec, hStream, 0));
}

FC_EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	FC_API(cuGraphLaunch_ptsz);
	FC_RETURN(graph_launch(hGraphExec, hStream, 1));
}

FC_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	FC_API(cuGraphExecDestroy);
	if (!hGraphExec)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	free(hGraphExec->launches);
	free(hGraphExec);
	FC_RETURN(CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	FC_API(cuGraphDestroy);
	if (!hGraph)
		FC_RETURN(CUDA_ERROR_INVALID_VALUE);
	for (struct CUgraphNode_st *x = hGraph->head, *n; x; x = n) {
		n = x->next;
		free(x);
	}
	free(hGraph);
	FC_RETURN(CUDA_SUCCESS);
}
